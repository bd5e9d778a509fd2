"""Per SandboxFusion `language` value, the programs tests/languages runs:
hello (prints "hello world"), echo (copies stdin to stdout; absent for the
test frameworks, which capture stdin), broken (does not compile or parse),
crash (fails at run time; crash_text: what its output shows), loop (never
ends; loop_out: what it prints first, for a runtime whose start-up could
outlast the limit by itself, with time_s its limit), memory (touches far more than 256 MiB; heap_error: the runtime's own
out-of-memory error, accepted instead of a kill for runtimes that size
their heap from the limit)."""

PY_ECHO = "import sys\nsys.stdout.write(sys.stdin.read())\n"
JS_ECHO = "process.stdout.write(require('fs').readFileSync(0, 'utf8'));\n"
JAVA_ECHO = """import java.io.*;
public class Main { public static void main(String[] a) throws IOException {
  byte[] b = System.in.readAllBytes(); System.out.write(b); System.out.flush(); } }
"""
JAVA_MEM = """import java.util.*;
public class Main { public static void main(String[] a) {
  List<byte[]> keep = new ArrayList<>();
  for (int i = 0; i < 4096; i++) { byte[] b = new byte[1 << 20]; Arrays.fill(b, (byte) 1); keep.add(b); }
  System.out.println(keep.size()); } }
"""

PROGRAMS = {
    "python": {
        "hello": 'print("hello world")\n', "echo": PY_ECHO,
        "broken": "def f(:\n    pass\n", "crash": 'raise ValueError("boom")\n', "crash_text": "ValueError: boom",
        "loop": "while True:\n    pass\n", "memory": 'x = b"x" * (1 << 30)\nprint(len(x))\n'},
    "pytest": {
        "hello": "def test_hello():\n    print('hello world')\n    assert 1 + 1 == 2\n", "hello_out": "1 passed",
        "broken": "def test_f(:\n    pass\n",
        "crash": "def f(x):\n    return x * 2\n\ndef test_f():\n    assert f(2) == 5\n", "crash_text": "1 failed",
        "loop": "def test_loop():\n    while True:\n        pass\n",
        "memory": 'def test_mem():\n    x = b"x" * (1 << 30)\n    assert len(x) > 0\n'},
    "cpp": {
        "hello": '#include <iostream>\nint main() { std::cout << "hello world" << std::endl; }\n',
        "echo": '#include <iostream>\nint main() { std::cout << std::cin.rdbuf(); }\n',
        "broken": "int main() { return undeclared_thing; }\n",
        "crash": '#include <stdexcept>\nint main() { throw std::runtime_error("boom"); }\n', "crash_text": "boom",
        "loop": "int main() { volatile unsigned long n = 0; for (;;) n++; }\n",
        "memory": '#include <vector>\n#include <cstdio>\nint main() { std::vector<char> v(1u << 30, 1); std::printf("%d\\n", v[12345]); }\n'},
    "java": {
        "hello": 'public class Main { public static void main(String[] a) { System.out.println("hello world"); } }\n',
        "echo": JAVA_ECHO,
        "broken": "public class Main { void f() { int x = \"s\"; } }\n",
        "crash": 'public class Main { public static void main(String[] a) { assert 1 + 1 == 3 : "boom"; } }\n',
        "crash_text": "AssertionError",
        "loop": "public class Main { public static void main(String[] a) { long n = 0; while (true) n++; } }\n",
        "memory": JAVA_MEM, "heap_error": "OutOfMemoryError"},
    "junit": {
        "hello": """import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.*;
public class MainTest { @Test void hello() { System.out.println("hello world"); assertEquals(2, 1 + 1); } }
""", "hello_out": "1 tests successful",
        "broken": "import org.junit.jupiter.api.Test;\npublic class MainTest { @Test void f() { int x = \"s\"; } }\n",
        "crash": """import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.*;
public class MainTest { @Test void wrong() { assertEquals(5, 2 * 2); } }
""", "crash_text": "1 tests failed",
        "loop": """import org.junit.jupiter.api.Test;
public class MainTest { @Test void loop() { long n = 0; while (true) n++; } }
""",
        "memory": """import org.junit.jupiter.api.Test;
import java.util.*;
public class MainTest { @Test void mem() {
  List<byte[]> keep = new ArrayList<>();
  for (int i = 0; i < 4096; i++) { byte[] b = new byte[1 << 20]; Arrays.fill(b, (byte) 1); keep.add(b); }
  if (keep.size() != 4096) throw new IllegalStateException(); } }
""", "heap_error": "OutOfMemoryError"},
    "nodejs": {
        "hello": 'console.log("hello world");\n', "echo": JS_ECHO,
        "broken": "function f( {\n", "crash": 'throw new Error("boom");\n', "crash_text": "Error: boom",
        "loop": "for (;;) {}\n", "memory": "const b = Buffer.alloc(1 << 30, 1);\nconsole.log(b[12345]);\n"},
    "typescript": {
        "hello": 'const who: string = "world";\nconsole.log(`hello ${who}`);\n',
        "echo": "import * as fs from 'fs';\nconst s: string = fs.readFileSync(0, 'utf8');\nprocess.stdout.write(s);\n",
        "broken": "function f(: number {\n",
        "crash": 'function f(x: number): number { throw new Error("boom " + x); }\nf(1);\n', "crash_text": "Error: boom 1",
        "loop": "let n: number = 0;\nfor (;;) { n++; }\n",
        "memory": "const b: Buffer = Buffer.alloc(1 << 30, 1);\nconsole.log(b[12345]);\n"},
    "go": {
        "hello": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello world") }\n',
        "echo": 'package main\n\nimport (\n\t"io"\n\t"os"\n)\n\nfunc main() { io.Copy(os.Stdout, os.Stdin) }\n',
        "broken": 'package main\n\nfunc main() { var x int = "s" }\n',
        "crash": 'package main\n\nfunc main() { panic("boom") }\n', "crash_text": "panic: boom",
        "loop": "package main\n\nfunc main() {\n\tn := 0\n\tfor {\n\t\tn++\n\t}\n}\n",
        "memory": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tb := make([]byte, 1<<30)\n\tfor i := range b {\n\t\tb[i] = 1\n\t}\n\tfmt.Println(b[12345])\n}\n'},
    "go_test": {
        "hello": """package main

import (
\t"fmt"
\t"testing"

\t"github.com/stretchr/testify/assert"
)

func TestHello(t *testing.T) {
\tfmt.Println("hello world")
\tassert.Equal(t, 2, 1+1)
}
""", "hello_out": "ok",
        "broken": 'package main\n\nimport "testing"\n\nfunc TestF(t *testing.T) { var x int = "s" }\n',
        "crash": """package main

import (
\t"testing"

\t"github.com/stretchr/testify/assert"
)

func TestWrong(t *testing.T) { assert.Equal(t, 5, 2*2) }
""", "crash_text": "FAIL",
        "loop": 'package main\n\nimport "testing"\n\nfunc TestLoop(t *testing.T) {\n\tn := 0\n\tfor {\n\t\tn++\n\t}\n}\n',
        "memory": 'package main\n\nimport "testing"\n\nfunc TestMem(t *testing.T) {\n\tb := make([]byte, 1<<30)\n\tfor i := range b {\n\t\tb[i] = 1\n\t}\n\tt.Log(b[12345])\n}\n'},
    "csharp": {
        "hello": 'using System;\nclass P { static void Main() { Console.WriteLine("hello world"); } }\n',
        "echo": 'using System;\nclass P { static void Main() { Console.Write(Console.In.ReadToEnd()); } }\n',
        "broken": 'class P { static void Main() { int x = "s"; } }\n',
        "crash": 'using System;\nclass P { static void Main() { throw new InvalidOperationException("boom"); } }\n',
        "crash_text": "boom",
        "loop": "class P { static void Main() { long n = 0; while (true) n++; } }\n",
        "memory": 'using System;\nclass P { static void Main() { var b = new byte[1 << 29]; for (int i = 0; i < b.Length; i++) b[i] = 1; Console.WriteLine(b[12345]); } }\n',
        "heap_error": "OutOfMemoryException"},
    "bash": {
        "hello": 'echo "hello world"\n', "echo": "cat\n",
        "broken": "if then fi (\n", "crash": 'echo boom >&2\nexit 3\n', "crash_text": "boom",
        "loop": "while :; do :; done\n", "memory_mib": 64, "memory": "x=$(head -c 800000000 /dev/zero | tr '\\0' x)\necho ${#x}\n"},
    "rust": {
        "hello": 'fn main() { println!("hello world"); }\n',
        "echo": 'use std::io::{self, Read, Write};\nfn main() { let mut s = String::new(); io::stdin().read_to_string(&mut s).unwrap(); io::stdout().write_all(s.as_bytes()).unwrap(); }\n',
        "broken": 'fn main() { let x: i32 = "no"; }\n',
        "crash": 'fn main() { let v: Vec<i32> = Vec::new(); println!("{}", v[3]); }\n', "crash_text": "panicked",
        "loop": "fn main() { let mut n: u64 = 0; loop { n = n.wrapping_add(1); if n == 0 { println!(\"{}\", n); } } }\n",
        "memory": 'fn main() { let v = vec![1u8; 1 << 30]; println!("{}", v[12345]); }\n'},
    "lua": {
        "hello": 'print("hello world")\n', "echo": 'io.write(io.read("a"))\n',
        "broken": "function f(\n", "crash": 'error("boom")\n', "crash_text": "boom",
        "loop": "while true do end\n", "memory": "local t = {}\nfor i = 1, 200000000 do t[i] = i end\nprint(#t)\n"},
    "R": {
        "hello": 'cat("hello world\\n")\n',
        "echo": 'x <- readLines(file("stdin"))\ncat(paste0(x, "\\n"), sep = "")\n',
        "broken": "f <- function( {\n", "crash": 'stop("boom")\n', "crash_text": "boom",
        "loop": "repeat {}\n", "memory": "x <- rep(1, 2e8)\ncat(length(x), \"\\n\")\n"},
    "perl": {
        "hello": 'print "hello world\\n";\n', "echo": "local $/; print <STDIN>;\n",
        "broken": "sub f { \n", "crash": 'die "boom\\n";\n', "crash_text": "boom",
        "loop": "while (1) {}\n", "memory": 'my $x = "x" x (1 << 30);\nprint length($x), "\\n";\n'},
    "D_ut": {
        "hello": 'import std.stdio;\nvoid main() { writeln("hello world"); }\n',
        "echo": 'import std.stdio;\nvoid main() { foreach (ubyte[] b; stdin.byChunk(4096)) stdout.rawWrite(b); }\n',
        "broken": 'void main() { int x = "s"; }\n',
        "crash": 'int twice(int x) { return 2 * x; }\nunittest { assert(twice(2) == 5); }\nvoid main() {}\n',
        "crash_text": "unittest",
        "loop": "void main() { ulong n = 0; while (true) { n++; } }\n",
        "memory": 'import std.stdio;\nvoid main() { auto a = new ubyte[](1 << 30); a[] = 1; writeln(a[12345]); }\n'},
    "ruby": {
        "hello": 'puts "hello world"\n', "echo": "print $stdin.read\n",
        "broken": "def f(\n", "crash": 'raise "boom"\n', "crash_text": "boom",
        "loop": "loop {}\n", "memory": 'x = "x" * (1 << 30)\nputs x.size\n'},
    "scala": {
        "hello": 'object Main { def main(args: Array[String]): Unit = println("hello world") }\n',
        "echo": "object Main { def main(args: Array[String]): Unit = { val b = System.in.readAllBytes(); System.out.write(b); System.out.flush() } }\n",
        "broken": 'object Main { def main(args: Array[String]): Unit = { val x: Int = "s" } }\n',
        "crash": 'object Main { def main(args: Array[String]): Unit = throw new IllegalStateException("boom") }\n',
        "crash_text": "boom",
        "loop": "object Main { def main(args: Array[String]): Unit = { var n = 0L; while (true) n += 1 } }\n",
        "memory": "object Main { def main(args: Array[String]): Unit = { val keep = new java.util.ArrayList[Array[Byte]]();"
                  " for (i <- 0 until 4096) { val b = new Array[Byte](1 << 20); java.util.Arrays.fill(b, 1.toByte); keep.add(b) };"
                  " println(keep.size) } }\n", "heap_error": "OutOfMemoryError"},
    "julia": {
        "hello": 'println("hello world")\n', "echo": "write(stdout, read(stdin))\n",
        "broken": "function f(\n", "crash": 'error("boom")\n', "crash_text": "boom",
        "loop": "println(\"looping\")\nflush(stdout)\nwhile true end\n", "loop_out": "looping", "time_s": 10,
        "memory": "x = ones(UInt8, 1 << 30)\nprintln(x[12345])\n"},
    "kotlin_script": {
        "hello": 'println("hello world")\n', "echo": "print(generateSequence(::readLine).joinToString(\"\") { it + \"\\n\" })\n",
        "broken": 'val x: Int = "s"\n', "crash": 'throw IllegalStateException("boom")\n', "crash_text": "boom",
        "loop": "println(\"looping\")\nvar n = 0L\nwhile (true) { n++ }\n", "loop_out": "looping", "time_s": 60,
        "memory": "val keep = ArrayList<ByteArray>()\nfor (i in 0 until 4096) { keep.add(ByteArray(1 shl 20) { 1 }) }\nprintln(keep.size)\n",
        "heap_error": "OutOfMemoryError"},
    "verilog": {
        "hello": 'module tb;\n  initial begin\n    $display("hello world");\n    $finish;\n  end\nendmodule\n',
        "broken": "module tb;\n  initial begin\n    $display(\"x\")\n  end\nendmodule\n",
        "crash": 'module tb;\n  initial begin\n    $display("boom");\n    $fatal(1, "boom");\n  end\nendmodule\n',
        "crash_text": "boom",
        "loop": "module tb;\n  integer n;\n  initial begin\n    n = 0;\n    forever n = n + 1;\n  end\nendmodule\n",
        "memory": "module tb;\n  reg [63:0] mem [0:(1<<26)-1];\n  integer i;\n  initial begin\n    for (i = 0; i < (1<<26); i = i + 1) mem[i] = i;\n"
                  "    $display(\"%0d\", mem[12345]);\n    $finish;\n  end\nendmodule\n"},
    "racket": {
        "hello": '#lang racket\n(displayln "hello world")\n', "echo": "#lang racket\n(copy-port (current-input-port) (current-output-port))\n",
        "broken": "#lang racket\n(define (f x\n", "crash": '#lang racket\n(error "boom")\n', "crash_text": "boom",
        "loop": "#lang racket\n(displayln \"looping\")\n(flush-output)\n(let loop () (loop))\n", "loop_out": "looping", "time_s": 10,
        "memory": "#lang racket\n(define b (make-bytes (expt 2 30) 65))\n(displayln (bytes-ref b 12345))\n"},
    "php": {
        "hello": 'echo "hello world\\n";\n', "echo": "<?php\necho stream_get_contents(STDIN);\n",
        "broken": "<?php\nfunction f( {\n", "crash": '<?php\nthrow new Exception("boom");\n', "crash_text": "boom",
        "loop": "<?php\nwhile (true) {}\n", "memory": '<?php\n$x = str_repeat("x", 1 << 30);\necho strlen($x), "\\n";\n'},
}
PROGRAMS["js"] = PROGRAMS["nodejs"]
PROGRAMS["ts"] = PROGRAMS["typescript"]
# ROLL's reward worker sends a code fence's tag as the language (docs/http.md)
PROGRAMS["python3"] = PROGRAMS["python"]
PROGRAMS["javascript"] = PROGRAMS["nodejs"]
