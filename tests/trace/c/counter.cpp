#include <iostream>
#include <vector>

struct Counter {
  int n;
  void add(int k) { n += k; }
};

int main() {
  Counter c{};
  std::vector<int> v = {1, 2, 3};
  for (int x : v)
    c.add(x);
  std::cout << c.n << "\n";
  return 0;
}
