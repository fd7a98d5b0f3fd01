// Minimal stand-in declarations (from the public zf docs) for a syntax check only.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
extern "C" {
struct zf_attr; struct zf_stack; struct zftl {}; struct zft {};
struct zft_msg { int reserved[4]; int pkts_left; int flags; int iovcnt; struct iovec iov[1]; };
int zf_init(void); int zf_deinit(void);
int zf_attr_alloc(struct zf_attr**); void zf_attr_free(struct zf_attr*);
int zf_stack_alloc(struct zf_attr*, struct zf_stack**); int zf_stack_free(struct zf_stack*);
int zf_reactor_perform(struct zf_stack*);
int zftl_listen(struct zf_stack*, const struct sockaddr*, socklen_t, const struct zf_attr*, struct zftl**);
int zftl_accept(struct zftl*, struct zft**); int zftl_free(struct zftl*);
int zft_free(struct zft*);
void zft_zc_recv(struct zft*, struct zft_msg*, int); int zft_zc_recv_done(struct zft*, struct zft_msg*);
ssize_t zft_send_single(struct zft*, const void*, size_t, int);
}
