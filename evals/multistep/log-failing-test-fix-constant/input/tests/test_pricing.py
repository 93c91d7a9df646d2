from shop.pricing import BULK_THRESHOLD, discount_rate, total
from shop.testing import make_order


def test_unit_price(db):
    order = make_order(db, items=[("widget", 12.00)])
    assert order.subtotal() == 12.00


def test_member_discount(db):
    assert discount_rate(1, is_member=True) == 0.05


def test_no_discount_below_threshold(db):
    assert discount_rate(BULK_THRESHOLD - 1) == 0.0


def test_bulk_discount(db):
    # Orders of BULK_THRESHOLD items or more get the bulk discount rate of 15%.
    order = make_order(db, items=[("widget", 12.00)] * 20)
    assert order.discount_rate() == 0.15


def test_tax_rate(db):
    assert str(total(100.00, 1)) == "121.00"
