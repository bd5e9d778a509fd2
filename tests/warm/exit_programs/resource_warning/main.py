import warnings, _socket
warnings.simplefilter("always")
s = _socket.socket()
print("an unclosed socket, warnings shown")
