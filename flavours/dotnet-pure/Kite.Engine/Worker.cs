using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Threading;
using Kite.App;
using Kite.Codec;
using Kite.Harness;

namespace Kite.Transport;

/// <summary>Set once to stop every thread of the server.</summary>
public sealed class StopFlag
{
    private volatile bool _set;
    public bool IsSet => _set;
    public void Set() => _set = true;
}

/// <summary>How a worker learns that its sockets have bytes.</summary>
public enum ReadMode
{
    /// <summary>Non-blocking reads of each socket in every pass, no readiness call (single).</summary>
    Direct,
    /// <summary>epoll_wait over the listener and the sessions (mono, pool workers, shards).</summary>
    Epoll,
}

/// <summary>
/// A server thread as an agent: <see cref="DoWork"/> is one bounded pass that
/// returns how much it did; the idle strategy decides what happens on zero.
/// It owns its connection slots, its index and its application; it may own a
/// listener (single, mono, shard) or take sockets from the front door's
/// queue (pool).
/// </summary>
public sealed unsafe class Worker : IDisposable
{
    private const ulong ListenerToken = ulong.MaxValue, WakeToken = ulong.MaxValue - 1;
    private const int MaxEvents = 64;
    private const int AcceptEveryPasses = 1024;

    public string Name { get; }
    public int Core { get; }
    private readonly ReadMode _mode;
    private readonly int _busyPollUsecs;
    private IdleStrategy _idle;
    private readonly Connection[] _slots;
    private readonly FieldIndex _ix = new();
    private readonly OrderAck _app;
    private readonly int _ep = -1;
    private readonly Native.EpollEvent* _events;
    private int _listener = -1;
    private SpscQueue? _inbox;
    private int _wakeFd = -1;
    private int _open;
    private bool _pending;
    private ulong _passes, _emptyPasses, _directPasses;
    private long _busyTicks, _startTicks, _endTicks;

    /// <summary>Sessions open now (read by the front door).</summary>
    public int OpenCount => Volatile.Read(ref _open);
    public int Capacity => _slots.Length;
    public ulong Orders => _app.Orders;
    /// <summary>What the thread allocated from its first pass to the stop (the steady state: 0 expected).</summary>
    public long LoopAllocatedBytes { get; private set; }

    public Worker(string name, int core, ReadMode mode, int capacity, IdleKind idle, int busyPollUsecs, ulong idBase)
    {
        Name = name;
        Core = core;
        _mode = mode;
        _busyPollUsecs = busyPollUsecs;
        _idle = new IdleStrategy(idle);
        _app = new OrderAck(idBase);
        var clock = new UtcClock();
        _slots = new Connection[capacity];
        for (int i = 0; i < capacity; i++) _slots[i] = new Connection(i, _app, clock);
        if (mode == ReadMode.Epoll)
        {
            _ep = Native.EpollCreate1(Native.EPOLL_CLOEXEC);
            if (_ep < 0) throw new InvalidOperationException($"epoll_create1: {Native.ErrorText(Native.Errno)}");
            _events = (Native.EpollEvent*)NativeMemory.Alloc(MaxEvents, (nuint)sizeof(Native.EpollEvent));
        }
    }

    /// <summary>This worker accepts its own connections from listener.</summary>
    public void AddListener(int listener)
    {
        _listener = listener;
        if (_mode == ReadMode.Epoll) Watch(listener, ListenerToken);
    }

    /// <summary>This worker takes sockets from inbox; the producer writes wakeFd after each (blocking idle).</summary>
    public void UseInbox(SpscQueue inbox, int wakeFd)
    {
        _inbox = inbox;
        _wakeFd = wakeFd;
        if (wakeFd >= 0) Watch(wakeFd, WakeToken);
    }

    /// <summary>Adopts an accepted socket; false (and the socket closed) when every slot is taken.</summary>
    public bool Adopt(int fd)
    {
        foreach (Connection c in _slots)
        {
            if (c.Open) continue;
            c.Attach(fd);
            if (_mode == ReadMode.Epoll) Watch(fd, (ulong)c.Slot);
            Volatile.Write(ref _open, _open + 1);
            return true;
        }
        Native.Close(fd);
        return false;
    }

    private void Watch(int fd, ulong token)
    {
        var ev = new Native.EpollEvent { Events = Native.EPOLLIN, Data = token };
        if (Native.EpollCtl(_ep, Native.EPOLL_CTL_ADD, fd, &ev) != 0)
            throw new InvalidOperationException($"epoll_ctl(ADD {fd}): {Native.ErrorText(Native.Errno)}");
    }

    private void Drop(Connection c)
    {
        c.Detach();  // close() takes the socket out of the epoll set
        Volatile.Write(ref _open, _open - 1);
    }

    private int AcceptAll()
    {
        int n = 0, fd;
        while ((fd = Sockets.Accept(_listener, _busyPollUsecs)) >= 0)
        {
            Adopt(fd);
            n++;
        }
        return n;
    }

    private int ReadOne(Connection c)
    {
        int r = c.Read(_ix);
        if (r < 0)
        {
            c.Flush();
            Drop(c);
            return 1;
        }
        if (!c.Flush()) Drop(c);
        else if (c.RxBacklog || c.HasTx) _pending = true;
        return r > 0 ? 1 : 0;
    }

    /// <summary>One pass: accept, read, process, send. Returns the work done (0: idle).</summary>
    public int DoWork()
    {
        int work = 0;
        if (_pending) work += ServicePending();
        if (_inbox != null)
            while (_inbox.TryDequeue(out int fd)) work += Adopt(fd) ? 1 : 0;
        if (_mode == ReadMode.Direct) return work + DirectPass();
        int n = Native.EpollWait(_ep, _events, MaxEvents, _pending || work > 0 ? 0 : _idle.WaitMs);
        for (int i = 0; i < n; i++)
        {
            ulong token = _events[i].Data;
            if (token == ListenerToken) work += AcceptAll();
            else if (token == WakeToken)
            {
                ulong drain;
                Native.Read(_wakeFd, &drain, sizeof(ulong));
            }
            else
            {
                Connection c = _slots[token];
                if (c.Open) work += ReadOne(c);
            }
        }
        return work;
    }

    private int DirectPass()
    {
        int work = 0;
        if (_listener >= 0 && (_open == 0 || ++_directPasses % AcceptEveryPasses == 0))
        {
            if (_open == 0 && _idle.Kind == IdleKind.Block) Sockets.WaitReadable(_listener, IdleStrategy.BlockTimeoutMs);
            work += AcceptAll();
        }
        foreach (Connection c in _slots)
        {
            if (!c.Open) continue;
            if (_idle.Kind == IdleKind.Block && _open == 1 && !_pending) Sockets.WaitReadable(c.Fd, IdleStrategy.BlockTimeoutMs);
            work += ReadOne(c);
        }
        return work;
    }

    private int ServicePending()
    {
        _pending = false;
        int work = 0;
        foreach (Connection c in _slots)
        {
            if (!c.Open || !(c.RxBacklog || c.HasTx)) continue;
            if (c.RxBacklog) work += c.Process(_ix);
            if (!c.Flush()) Drop(c);
            else if (c.RxBacklog || c.HasTx) _pending = true;
        }
        return work;
    }

    /// <summary>
    /// The thread's body: names and pins itself, signals ready, then runs
    /// passes until stop; then logs every session out (waiting up to
    /// logoutWaitMs for the answers) and closes them.
    /// </summary>
    public void Run(StopFlag stop, CountdownEvent started, int logoutWaitMs)
    {
        CurrentThread.SetName(Name);
        CurrentThread.Pin(Core);
        started.Signal();
        _startTicks = Stopwatch.GetTimestamp();
        long allocated0 = GC.GetAllocatedBytesForCurrentThread();
        long last = _startTicks;
        while (!stop.IsSet)
        {
            int work = DoWork();
            long now = Stopwatch.GetTimestamp();
            _passes++;
            if (work > 0) _busyTicks += now - last;
            else _emptyPasses++;
            last = now;
            _idle.Idle(work);
        }
        _endTicks = Stopwatch.GetTimestamp();
        LoopAllocatedBytes = GC.GetAllocatedBytesForCurrentThread() - allocated0;
        Shutdown(logoutWaitMs);
    }

    /// <summary>A Logout to every logged-on session; the answers are awaited, then every socket closed.</summary>
    public void Shutdown(int logoutWaitMs)
    {
        foreach (Connection c in _slots)
        {
            if (!c.Open) continue;
            if (c.HasRoom(1)) c.Session.StartLogout(c);
            if (!c.Flush()) Drop(c);
        }
        _idle = new IdleStrategy(IdleKind.Yield);
        long deadline = Stopwatch.GetTimestamp() + logoutWaitMs * Stopwatch.Frequency / 1000;
        _listener = -1;  // no new sessions while stopping
        while (_open > 0 && Stopwatch.GetTimestamp() < deadline) _idle.Idle(DoWork());
        foreach (Connection c in _slots)
            if (c.Open) Drop(c);
    }

    /// <summary>The thread's "server load:" line (the lab's format).</summary>
    public string LoadLine() =>
        ServerHarness.LoadLine(Name, (long)_passes, (long)_emptyPasses, _busyTicks / (double)Stopwatch.Frequency,
                               (_endTicks - _startTicks) / (double)Stopwatch.Frequency, (long)_app.Orders);

    public void Dispose()
    {
        foreach (Connection c in _slots) c.Dispose();
        if (_ep >= 0) Native.Close(_ep);
        if (_events != null) NativeMemory.Free(_events);
    }
}
