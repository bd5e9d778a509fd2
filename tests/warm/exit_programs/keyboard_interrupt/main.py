print("body")
raise KeyboardInterrupt
