def normalize_email(address: str, strip_plus: bool = False) -> str:
    local, _, domain = address.strip().lower().partition('@')
    if strip_plus:
        local = local.split('+', 1)[0]
    return f'{local}@{domain}'
