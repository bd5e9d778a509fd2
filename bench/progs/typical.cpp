// A typical SURGE-sized C++ program for the compile-cache benchmark: about a
// hundred lines using <iostream>, <vector> and <algorithm>. bench_cache puts a
// unique comment line in front of it to force cache misses.
#include <algorithm>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

struct Edge {
  int from, to, weight;
};

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n), rank_(n, 0) { std::iota(parent_.begin(), parent_.end(), 0); }

  int find(int x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  bool unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return false;
    if (rank_[a] < rank_[b]) std::swap(a, b);
    parent_[b] = a;
    if (rank_[a] == rank_[b]) ++rank_[a];
    return true;
  }

 private:
  std::vector<int> parent_;
  std::vector<int> rank_;
};

static long long kruskal(int n, std::vector<Edge> edges) {
  std::sort(edges.begin(), edges.end(), [](const Edge &x, const Edge &y) { return x.weight < y.weight; });
  UnionFind uf(n);
  long long total = 0;
  for (const Edge &e : edges)
    if (uf.unite(e.from, e.to)) total += e.weight;
  return total;
}

static std::vector<int> sieve(int limit) {
  std::vector<bool> composite(limit + 1, false);
  std::vector<int> primes;
  for (int i = 2; i <= limit; ++i) {
    if (composite[i]) continue;
    primes.push_back(i);
    for (long long j = (long long)i * i; j <= limit; j += i) composite[j] = true;
  }
  return primes;
}

static int longest_increasing_subsequence(const std::vector<int> &v) {
  std::vector<int> tails;
  for (int x : v) {
    auto it = std::lower_bound(tails.begin(), tails.end(), x);
    if (it == tails.end()) tails.push_back(x);
    else *it = x;
  }
  return (int)tails.size();
}

static std::string run_length(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    while (j < s.size() && s[j] == s[i]) ++j;
    out += s[i];
    out += std::to_string(j - i);
    i = j;
  }
  return out;
}

int main() {
  std::vector<Edge> edges;
  unsigned seed = 12345;
  auto next = [&seed]() {
    seed = seed * 1103515245u + 12345u;
    return (int)((seed >> 16) & 0x7fff);
  };
  const int n = 200;
  for (int i = 1; i < n; ++i) edges.push_back({i, next() % i, 1 + next() % 1000});
  for (int k = 0; k < 600; ++k) edges.push_back({next() % n, next() % n, 1 + next() % 1000});
  std::cout << "mst " << kruskal(n, edges) << "\n";

  std::vector<int> primes = sieve(10000);
  std::cout << "primes " << primes.size() << " last " << primes.back() << "\n";

  std::vector<int> seq(500);
  std::generate(seq.begin(), seq.end(), [&next]() { return next() % 10000; });
  std::cout << "lis " << longest_increasing_subsequence(seq) << "\n";

  std::vector<int> sorted = seq;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::cout << "distinct " << sorted.size() << " median " << sorted[sorted.size() / 2] << "\n";

  std::cout << "rle " << run_length("aaabccddddde") << "\n";
  return 0;
}
