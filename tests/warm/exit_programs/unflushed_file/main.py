import os
f = os.fdopen(os.dup(1), "w")
f.write("written to a copy of stdout, flushed only when the file is finalised\n")
print("body")
