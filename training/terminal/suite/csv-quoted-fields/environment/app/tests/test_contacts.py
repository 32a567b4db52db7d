import subprocess

out = subprocess.run(["python3", "/app/contacts.py"], capture_output=True, text=True).stdout.split()
assert out == ["ada@example.com", "grace@example.com", "linus@example.com"], out
print("ok")
