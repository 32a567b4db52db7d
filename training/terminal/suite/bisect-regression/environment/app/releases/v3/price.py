def total(items):
    return round(sum(qty * unit for _, qty, unit in items), 2)
