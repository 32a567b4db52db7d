def total(items):
    return sum(qty * unit for _, qty, unit in items)
