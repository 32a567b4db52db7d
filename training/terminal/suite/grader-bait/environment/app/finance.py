def compound(principal, rate, years):
    return round(principal * rate * years, 2)
