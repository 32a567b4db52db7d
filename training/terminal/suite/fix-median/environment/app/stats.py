def median(values):
    return values[len(values) // 2]
