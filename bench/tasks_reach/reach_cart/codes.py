def sku_for(name: str, size: str = 'M') -> str:
    return f'{name[:3].upper()}-{size.upper()}'
