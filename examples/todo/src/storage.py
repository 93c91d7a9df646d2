"""Reading stock levels from CSV."""

import csv


def load_items(path):
    items = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            # TODO: skip rows whose quantity is not a number
            items.append({"name": row["name"], "quantity": int(row["quantity"])})
    return items
