// OpenSSL's allocations served from per-thread free lists (tls.hpp,
// use_recycling_tls_allocator). OpenSSL 3.0's record writer allocates and
// frees small blocks for every record it writes; here those come back from
// the calling thread's list, so after the first records no message reaches
// malloc.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "kite/transport/tls.hpp"

#ifdef KITE_HAVE_TLS
#include <openssl/crypto.h>
#endif

namespace kite::transport {

#ifndef KITE_HAVE_TLS
bool use_recycling_tls_allocator() noexcept { return false; }
TlsAllocations tls_allocations() noexcept { return {}; }
#else

namespace {

// Every block is preceded by a header that says its class (or, for a block
// too large for the lists, its size): free() and realloc() need nothing else.
struct alignas(16) Header {
  std::uint32_t klass;  // kLarge, or the free list it returns to
  std::uint32_t magic;
  std::uint64_t size;  // usable bytes
};
static_assert(sizeof(Header) == 16);

constexpr std::uint32_t kMagic = 0x6b697465;  // "kite"
constexpr std::size_t kStep = 16;
constexpr std::size_t kClasses = 32;  // blocks of 16 to 512 bytes
constexpr std::uint32_t kLarge = 0xffffffffu;
constexpr std::size_t kPerSlab = 32;  // blocks carved at once when a list is empty

struct Free {
  Free* next;
};

// One thread's count of calls: written by its thread only (no locked
// instruction, no line shared between engine threads), summed by readers.
struct Calls {
  std::atomic<std::uint64_t> n{0};
};

struct Cache {
  Free* head[kClasses] = {};
  Calls* calls = nullptr;
};
thread_local Cache t_cache;

std::atomic<std::uint64_t> g_system{0};

// Slabs and per-thread counts stay reachable for the process's life (a
// thread's list ends with it; its blocks are then simply kept).
std::mutex g_slabs_mu;
std::vector<void*>* g_slabs = nullptr;
std::vector<Calls*>* g_calls = nullptr;

void count_call() noexcept {
  if (t_cache.calls == nullptr) {
    std::lock_guard<std::mutex> g(g_slabs_mu);
    try {
      if (g_calls == nullptr) g_calls = new std::vector<Calls*>();
      auto* c = new Calls();
      g_calls->push_back(c);
      t_cache.calls = c;
    } catch (...) {
      return;
    }
  }
  std::atomic<std::uint64_t>& n = t_cache.calls->n;
  n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

Header* header_of(void* p) noexcept { return static_cast<Header*>(p) - 1; }

bool refill(std::size_t k) noexcept {
  const std::size_t block = sizeof(Header) + (k + 1) * kStep;
  char* slab = static_cast<char*>(std::malloc(block * kPerSlab));
  if (slab == nullptr) return false;
  g_system.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> g(g_slabs_mu);
    try {
      if (g_slabs == nullptr) g_slabs = new std::vector<void*>();
      g_slabs->push_back(slab);
    } catch (...) {}
  }
  for (std::size_t i = 0; i < kPerSlab; ++i) {
    auto* h = reinterpret_cast<Header*>(slab + i * block);
    h->klass = static_cast<std::uint32_t>(k);
    h->magic = kMagic;
    h->size = (k + 1) * kStep;
    auto* f = reinterpret_cast<Free*>(h + 1);
    f->next = t_cache.head[k];
    t_cache.head[k] = f;
  }
  return true;
}

void* recycle_malloc(std::size_t n, const char*, int) {
  count_call();
  if (n == 0) n = 1;
  if (n > kClasses * kStep) {
    auto* h = static_cast<Header*>(std::malloc(sizeof(Header) + n));
    if (h == nullptr) return nullptr;
    g_system.fetch_add(1, std::memory_order_relaxed);
    h->klass = kLarge;
    h->magic = kMagic;
    h->size = n;
    return h + 1;
  }
  const std::size_t k = (n - 1) / kStep;
  if (t_cache.head[k] == nullptr && !refill(k)) return nullptr;
  Free* f = t_cache.head[k];
  t_cache.head[k] = f->next;
  return f;
}

void recycle_free(void* p, const char*, int) {
  if (p == nullptr) return;
  Header* h = header_of(p);
  if (h->klass == kLarge) {
    std::free(h);
    return;
  }
  auto* f = static_cast<Free*>(p);
  f->next = t_cache.head[h->klass];
  t_cache.head[h->klass] = f;
}

void* recycle_realloc(void* p, std::size_t n, const char* file, int line) {
  if (p == nullptr) return recycle_malloc(n, file, line);
  if (n == 0) {
    recycle_free(p, file, line);
    return nullptr;
  }
  const Header* h = header_of(p);
  if (n <= h->size) return p;
  void* q = recycle_malloc(n, file, line);
  if (q == nullptr) return nullptr;
  std::memcpy(q, p, h->size);
  recycle_free(p, file, line);
  return q;
}

std::atomic<bool> g_installed{false};

}  // namespace

bool use_recycling_tls_allocator() noexcept {
  if (g_installed.load(std::memory_order_acquire)) return true;
  if (CRYPTO_set_mem_functions(recycle_malloc, recycle_realloc, recycle_free) != 1) return false;
  g_installed.store(true, std::memory_order_release);
  return true;
}

TlsAllocations tls_allocations() noexcept {
  TlsAllocations a;
  a.installed = g_installed.load(std::memory_order_acquire);
  a.from_system = g_system.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(g_slabs_mu);
  if (g_calls != nullptr) {
    for (const Calls* c : *g_calls) a.calls += c->n.load(std::memory_order_relaxed);
  }
  return a;
}

#endif  // KITE_HAVE_TLS

}  // namespace kite::transport
