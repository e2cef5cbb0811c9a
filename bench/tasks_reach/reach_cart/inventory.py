from codes import sku_for

STOCK = {'SHI-M': 3}


def in_stock(name, size):
    return STOCK.get(sku_for(name, size), 0) > 0
