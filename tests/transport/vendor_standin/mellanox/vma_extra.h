// Minimal stand-in declarations (from the public vma_extra.h) for a syntax check only.
#pragma once
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
typedef enum { VMA_SOCKETXTREME_PACKET = (1ULL << 32), VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED = (1ULL << 33) } vma_socketxtreme_events_t;
struct vma_buff_t { struct vma_buff_t* next; void* payload; uint16_t len; };
struct vma_packet_desc_t { size_t num_bufs; uint16_t total_len; struct vma_buff_t* buff_lst; };
struct vma_completion_t { struct vma_packet_desc_t packet; uint64_t events; uint64_t user_data; struct sockaddr_in src; int listen_fd; };
struct vma_api_t {
  int (*socketxtreme_poll)(int, struct vma_completion_t*, unsigned int, int);
  int (*get_socket_rings_fds)(int, int*, int);
  int (*socketxtreme_free_vma_packets)(struct vma_packet_desc_t*, int);
};
static inline struct vma_api_t* vma_get_api() { return nullptr; }
