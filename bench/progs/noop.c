/* The do-nothing program of the overhead benchmark (built with gcc -static -O2). */
int main(void) { return 0; }
