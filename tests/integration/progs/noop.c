/* Does nothing: the cheapest program the sandbox can run. */
int main(void) { return 0; }
