def parse_duration(text):
    raise NotImplementedError
