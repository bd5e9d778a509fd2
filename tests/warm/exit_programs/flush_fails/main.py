import os
print("buffered, never delivered", end="")
os.close(1)
