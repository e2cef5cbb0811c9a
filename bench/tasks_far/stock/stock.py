from policy import threshold


def needs_reorder(item):
    return item["on_hand"] < threshold(item["category"], item["daily_sales"])
