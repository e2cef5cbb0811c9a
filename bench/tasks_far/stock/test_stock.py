from stock import needs_reorder


def test_known_categories():
    assert needs_reorder({"category": "food", "on_hand": 5, "daily_sales": 2})
    assert not needs_reorder({"category": "tools", "on_hand": 30, "daily_sales": 2})


def test_unknown_categories_use_a_week():
    assert needs_reorder({"category": "toys", "on_hand": 10, "daily_sales": 2})
    assert not needs_reorder({"category": "toys", "on_hand": 15, "daily_sales": 2})
