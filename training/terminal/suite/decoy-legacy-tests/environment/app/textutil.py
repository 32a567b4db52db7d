def slugify(title):
    return title.lower().replace(" ", "-")
