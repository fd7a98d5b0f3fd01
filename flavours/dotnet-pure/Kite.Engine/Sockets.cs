using System;
using System.Buffers.Binary;
using System.Text;

namespace Kite.Transport;

/// <summary>Listening and accepted sockets over libc (set-up paths: errors are exceptions with errno's text).</summary>
public static unsafe class Sockets
{
    /// <summary>A non-blocking IPv4 listener on bind:port (SO_REUSEADDR; SO_REUSEPORT when asked). port 0 picks one.</summary>
    public static int Listen(string bind, int port, bool reusePort, out int boundPort)
    {
        uint addr;
        byte[] text = Encoding.ASCII.GetBytes(bind + "\0");
        fixed (byte* t = text)
            if (Native.InetPton(Native.AF_INET, t, &addr) != 1) throw new ArgumentException($"--bind {bind}: not an IPv4 address");
        int fd = Native.Socket(Native.AF_INET, Native.SOCK_STREAM | Native.SOCK_NONBLOCK | Native.SOCK_CLOEXEC, 0);
        if (fd < 0) throw Error("socket");
        SetInt(fd, Native.SOL_SOCKET, Native.SO_REUSEADDR, 1, "SO_REUSEADDR");
        if (reusePort) SetInt(fd, Native.SOL_SOCKET, Native.SO_REUSEPORT, 1, "SO_REUSEPORT");
        var sa = new Native.SockAddrIn { Family = Native.AF_INET, Port = BinaryPrimitives.ReverseEndianness((ushort)port), Addr = addr };
        if (Native.Bind(fd, &sa, (uint)sizeof(Native.SockAddrIn)) != 0) throw Error($"bind {bind}:{port}");
        if (Native.Listen(fd, 1024) != 0) throw Error("listen");
        uint len = (uint)sizeof(Native.SockAddrIn);
        if (Native.GetSockName(fd, &sa, &len) != 0) throw Error("getsockname");
        boundPort = BinaryPrimitives.ReverseEndianness(sa.Port);
        return fd;
    }

    /// <summary>
    /// Accepts one connection, non-blocking, with TCP_NODELAY and SO_BUSY_POLL
    /// (when busyPollUsecs > 0). Returns the socket, or -1 when none waits.
    /// </summary>
    public static int Accept(int listener, int busyPollUsecs)
    {
        int fd = Native.Accept4(listener, null, null, Native.SOCK_NONBLOCK | Native.SOCK_CLOEXEC);
        if (fd < 0) return -1;
        int one = 1;
        Native.SetSockOpt(fd, Native.IPPROTO_TCP, Native.TCP_NODELAY, &one, sizeof(int));
        // The raw socket option: .NET has no named SO_BUSY_POLL.
        if (busyPollUsecs > 0 && Native.SetSockOpt(fd, Native.SOL_SOCKET, Native.SO_BUSY_POLL, &busyPollUsecs, sizeof(int)) != 0)
            Console.Error.WriteLine($"kite-dotnet-pure: SO_BUSY_POLL {busyPollUsecs}: {Native.ErrorText(Native.Errno)}");
        return fd;
    }

    /// <summary>Waits up to timeoutMs for fd to be readable (the front door's and blocking single's wait).</summary>
    public static bool WaitReadable(int fd, int timeoutMs)
    {
        var p = new Native.PollFd { Fd = fd, Events = Native.POLLIN };
        return Native.Poll(&p, 1, timeoutMs) > 0;
    }

    /// <summary>A blocking loopback client socket (warm-up and tests).</summary>
    public static int ConnectLoopback(int port)
    {
        int fd = Native.Socket(Native.AF_INET, Native.SOCK_STREAM | Native.SOCK_CLOEXEC, 0);
        if (fd < 0) throw Error("socket");
        var sa = new Native.SockAddrIn { Family = Native.AF_INET, Port = BinaryPrimitives.ReverseEndianness((ushort)port),
                                         Addr = BinaryPrimitives.ReverseEndianness(0x7f000001u) };
        if (Native.Connect(fd, &sa, (uint)sizeof(Native.SockAddrIn)) != 0) throw Error($"connect 127.0.0.1:{port}");
        int one = 1;
        Native.SetSockOpt(fd, Native.IPPROTO_TCP, Native.TCP_NODELAY, &one, sizeof(int));
        return fd;
    }

    /// <summary>Sends all of data (blocking socket).</summary>
    public static void SendAll(int fd, ReadOnlySpan<byte> data)
    {
        fixed (byte* p = data)
        {
            int off = 0;
            while (off < data.Length)
            {
                nint n = Native.Send(fd, p + off, (nuint)(data.Length - off), Native.MSG_NOSIGNAL);
                if (n <= 0) throw Error("send");
                off += (int)n;
            }
        }
    }

    /// <summary>One non-blocking read into dest: bytes read, 0 when none waits, -1 at the end of the stream.</summary>
    public static int TryRecv(int fd, Span<byte> dest)
    {
        fixed (byte* p = dest)
        {
            nint n = Native.Recv(fd, p, (nuint)dest.Length, Native.MSG_DONTWAIT);
            if (n > 0) return (int)n;
            if (n == 0) return -1;
            return Native.Errno == Native.EAGAIN ? 0 : -1;
        }
    }

    public static void Close(int fd) => Native.Close(fd);

    public static int GetInt(int fd, int level, int name)
    {
        int v = 0;
        uint len = sizeof(int);
        return Native.GetSockOpt(fd, level, name, &v, &len) == 0 ? v : -1;
    }

    private static void SetInt(int fd, int level, int name, int value, string what)
    {
        if (Native.SetSockOpt(fd, level, name, &value, sizeof(int)) != 0) throw Error(what);
    }

    private static InvalidOperationException Error(string what) => new InvalidOperationException($"{what}: {Native.ErrorText(Native.Errno)}");
}
