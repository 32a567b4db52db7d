def newest(versions):
    return max(versions)
