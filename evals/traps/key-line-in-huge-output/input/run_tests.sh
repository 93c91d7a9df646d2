#!/bin/sh
i=1
while [ $i -le 3000 ]; do
  echo "test_case_$i ... ok"
  if [ $i -eq 1700 ]; then echo "test_refund_rounding ... FAILED (expected 10.05, got 10.04)"; fi
  i=$((i+1))
done
echo "3001 tests, 1 failure"
