import contextlib, io
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    print("captured")
print("restored:", repr(buf.getvalue()))
