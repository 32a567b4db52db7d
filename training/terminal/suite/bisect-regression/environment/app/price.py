def total(items):
    return round(sum(qty + unit for _, qty, unit in items), 2)


def count(items):
    return len(items)
