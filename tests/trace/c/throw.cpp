#include <iostream>
#include <stdexcept>

int check(int x) {
  if (x < 0)
    throw std::invalid_argument("negative");
  return x;
}

int safe(int x) {
  try {
    return check(x);
  } catch (const std::invalid_argument &e) {
    return -1;
  }
}

int main() {
  std::cout << safe(2) << " " << safe(-5) << "\n";
  return 0;
}
