import subprocess

out = subprocess.run(["python3", "/app/topwords.py", "/app/sample.txt", "3"], capture_output=True, text=True).stdout
assert out == "and 3\nsat 3\nthe 3\n", out
print("ok")
