using System;
using System.Runtime.InteropServices;

namespace Kite.Transport;

/// <summary>
/// The libc calls of the transport and the agents, with blittable
/// signatures (no marshalling, no allocation). Errors come back as -1 with
/// errno in <see cref="Marshal.GetLastPInvokeError"/>.
/// </summary>
internal static unsafe partial class Native
{
    private const string Libc = "libc";

    public const int AF_INET = 2, SOCK_STREAM = 1, SOCK_NONBLOCK = 0x800, SOCK_CLOEXEC = 0x80000;
    public const int SOL_SOCKET = 1, SO_REUSEADDR = 2, SO_REUSEPORT = 15, SO_BUSY_POLL = 46;
    public const int IPPROTO_TCP = 6, TCP_NODELAY = 1;
    public const int MSG_NOSIGNAL = 0x4000, MSG_DONTWAIT = 0x40;
    public const int EAGAIN = 11, EINTR = 4;
    public const int EPOLL_CTL_ADD = 1, EPOLL_CTL_DEL = 2, EPOLLIN = 1, EPOLLERR = 8, EPOLLHUP = 0x10, EPOLL_CLOEXEC = 0x80000;
    public const short POLLIN = 1;
    public const int PR_SET_NAME = 15;
    public const int EFD_NONBLOCK = 0x800, EFD_CLOEXEC = 0x80000;

    [StructLayout(LayoutKind.Sequential)]
    public struct SockAddrIn
    {
        public ushort Family;
        public ushort Port;  // network order
        public uint Addr;    // network order
        public ulong Zero;
    }

    [StructLayout(LayoutKind.Sequential, Pack = 1)]
    public struct EpollEvent
    {
        public uint Events;
        public ulong Data;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct PollFd
    {
        public int Fd;
        public short Events;
        public short Revents;
    }

    [LibraryImport(Libc, EntryPoint = "socket", SetLastError = true)]
    public static partial int Socket(int domain, int type, int protocol);
    [LibraryImport(Libc, EntryPoint = "setsockopt", SetLastError = true)]
    public static partial int SetSockOpt(int fd, int level, int name, int* value, uint length);
    [LibraryImport(Libc, EntryPoint = "getsockopt", SetLastError = true)]
    public static partial int GetSockOpt(int fd, int level, int name, int* value, uint* length);
    [LibraryImport(Libc, EntryPoint = "bind", SetLastError = true)]
    public static partial int Bind(int fd, SockAddrIn* addr, uint length);
    [LibraryImport(Libc, EntryPoint = "connect", SetLastError = true)]
    public static partial int Connect(int fd, SockAddrIn* addr, uint length);
    [LibraryImport(Libc, EntryPoint = "listen", SetLastError = true)]
    public static partial int Listen(int fd, int backlog);
    [LibraryImport(Libc, EntryPoint = "getsockname", SetLastError = true)]
    public static partial int GetSockName(int fd, SockAddrIn* addr, uint* length);
    [LibraryImport(Libc, EntryPoint = "accept4", SetLastError = true)]
    public static partial int Accept4(int fd, void* addr, void* length, int flags);
    [LibraryImport(Libc, EntryPoint = "recv", SetLastError = true)]
    public static partial nint Recv(int fd, byte* buf, nuint length, int flags);
    [LibraryImport(Libc, EntryPoint = "send", SetLastError = true)]
    public static partial nint Send(int fd, byte* buf, nuint length, int flags);
    [LibraryImport(Libc, EntryPoint = "close", SetLastError = true)]
    public static partial int Close(int fd);
    [LibraryImport(Libc, EntryPoint = "epoll_create1", SetLastError = true)]
    public static partial int EpollCreate1(int flags);
    [LibraryImport(Libc, EntryPoint = "epoll_ctl", SetLastError = true)]
    public static partial int EpollCtl(int epfd, int op, int fd, EpollEvent* ev);
    [LibraryImport(Libc, EntryPoint = "epoll_wait", SetLastError = true)]
    public static partial int EpollWait(int epfd, EpollEvent* events, int max, int timeoutMs);
    [LibraryImport(Libc, EntryPoint = "poll", SetLastError = true)]
    public static partial int Poll(PollFd* fds, nuint count, int timeoutMs);
    [LibraryImport(Libc, EntryPoint = "eventfd", SetLastError = true)]
    public static partial int EventFd(uint initial, int flags);
    [LibraryImport(Libc, EntryPoint = "read", SetLastError = true)]
    public static partial nint Read(int fd, void* buf, nuint length);
    [LibraryImport(Libc, EntryPoint = "write", SetLastError = true)]
    public static partial nint Write(int fd, void* buf, nuint length);
    [LibraryImport(Libc, EntryPoint = "sched_setaffinity", SetLastError = true)]
    public static partial int SchedSetAffinity(int pid, nuint size, ulong* mask);
    [LibraryImport(Libc, EntryPoint = "sched_getcpu")]
    public static partial int SchedGetCpu();
    [LibraryImport(Libc, EntryPoint = "sched_yield")]
    public static partial int SchedYield();
    [LibraryImport(Libc, EntryPoint = "prctl", SetLastError = true)]
    public static partial int Prctl(int option, byte* arg2, nint arg3, nint arg4, nint arg5);
    [LibraryImport(Libc, EntryPoint = "inet_pton")]
    public static partial int InetPton(int family, byte* src, uint* dst);
    [LibraryImport(Libc, EntryPoint = "strerror")]
    public static partial byte* StrError(int errnum);

    public static int Errno => Marshal.GetLastPInvokeError();

    /// <summary>errno as text (set-up paths only: it allocates).</summary>
    public static string ErrorText(int errno) => Marshal.PtrToStringUTF8((nint)StrError(errno)) ?? ("errno " + errno);
}
