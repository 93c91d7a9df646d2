"""Pricing rules for the shop: discounts, tax and rounding."""

from decimal import ROUND_HALF_EVEN, Decimal

# Discount for signed-in members, as a fraction of the subtotal.
MEMBER_DISCOUNT_RATE = 0.05

# Orders with at least BULK_THRESHOLD items get BULK_DISCOUNT_RATE off.
BULK_THRESHOLD = 20
BULK_DISCOUNT_RATE = 0.10

# VAT applied after discounts.
TAX_RATE = 0.21

# Orders above this subtotal ship for free.
FREE_SHIPPING_OVER = 50.00


def discount_rate(item_count, is_member=False):
    """The discount rate for an order: the larger of the bulk and member rates."""
    rate = 0.0
    if item_count >= BULK_THRESHOLD:
        rate = BULK_DISCOUNT_RATE
    if is_member:
        rate = max(rate, MEMBER_DISCOUNT_RATE)
    return rate


def total(subtotal, item_count, is_member=False):
    """The amount to pay: discount, then tax, rounded half-even to cents."""
    discounted = subtotal * (1 - discount_rate(item_count, is_member))
    taxed = Decimal(str(discounted * (1 + TAX_RATE)))
    return taxed.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
