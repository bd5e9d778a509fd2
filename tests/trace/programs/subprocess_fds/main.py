import subprocess, sys
r = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.listdir('/proc/self/fd')))"],
                   capture_output=True, text=True, close_fds=False)
print(r.stdout.strip(), r.returncode)
import os
print(sorted(k for k in os.environ if k.startswith("SURGEBOX")))
