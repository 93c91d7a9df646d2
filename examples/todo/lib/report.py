"""Formatting the stock report."""

LOW = 5


def render(items):
    lines = []
    for item in sorted(items, key=lambda i: i["name"]):
        flag = " (low)" if item["quantity"] < LOW else ""
        lines.append(f"{item['name']}: {item['quantity']}{flag}")
    # TODO: make the low-stock threshold configurable
    return "\n".join(lines)
