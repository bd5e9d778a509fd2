import sys
print("out")
sys.exit("the message goes to stderr, status 1")
