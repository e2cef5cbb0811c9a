def discount():
    return 0.1
