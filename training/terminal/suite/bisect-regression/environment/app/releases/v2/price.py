def total(items):
    # faster
    return sum(qty * unit for _, qty, unit in items)
