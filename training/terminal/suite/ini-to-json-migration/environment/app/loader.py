import configparser


def _value(text):
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.isdigit() else text


def load(name):
    parser = configparser.ConfigParser()
    parser.read(f"/app/conf/{name}.ini")
    return {key: _value(value) for key, value in parser["service"].items()}
