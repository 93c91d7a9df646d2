"""Command-line entry point: load the stock file and print the report."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

from storage import load_items
from report import render


def main(argv):
    if len(argv) < 2:
        print("usage: main.py STOCK.csv")
        return 2
    # TODO: accept several stock files and merge them
    items = load_items(argv[1])
    print(render(items))
    return 0


if __name__ == "__main__":
    # TODO: return a non-zero exit code when an item is out of stock
    sys.exit(main(sys.argv))
