using System;
using System.Threading;

namespace Kite.Transport;

/// <summary>
/// The pool's front door: accepts on the listener (blocking in poll, so it
/// costs nothing while no client connects) and hands each socket to the next
/// worker with room, round robin, through that worker's bounded lock-free
/// queue. When every worker is full it waits for room.
/// </summary>
public sealed unsafe class FrontDoor
{
    public const string ThreadName = "kite-front";
    private readonly int _listener, _core, _busyPollUsecs;
    private readonly Worker[] _workers;
    private readonly SpscQueue[] _queues;
    private readonly int[] _wakeFds;
    private int _next;

    public FrontDoor(int listener, int core, int busyPollUsecs, Worker[] workers, bool wake)
    {
        _listener = listener;
        _core = core;
        _busyPollUsecs = busyPollUsecs;
        _workers = workers;
        _queues = new SpscQueue[workers.Length];
        _wakeFds = new int[workers.Length];
        for (int i = 0; i < workers.Length; i++)
        {
            _queues[i] = new SpscQueue(workers[i].Capacity);
            _wakeFds[i] = wake ? Native.EventFd(0, Native.EFD_NONBLOCK | Native.EFD_CLOEXEC) : -1;
            if (wake && _wakeFds[i] < 0) throw new InvalidOperationException($"eventfd: {Native.ErrorText(Native.Errno)}");
            workers[i].UseInbox(_queues[i], _wakeFds[i]);
        }
    }

    public void Run(StopFlag stop, CountdownEvent started)
    {
        CurrentThread.SetName(ThreadName);
        CurrentThread.Pin(_core);
        started.Signal();
        while (!stop.IsSet)
        {
            if (!Sockets.WaitReadable(_listener, IdleStrategy.BlockTimeoutMs)) continue;
            int fd;
            while ((fd = Sockets.Accept(_listener, _busyPollUsecs)) >= 0) HandOver(fd, stop);
        }
    }

    private void HandOver(int fd, StopFlag stop)
    {
        while (!stop.IsSet)
        {
            for (int k = 0; k < _workers.Length; k++)
            {
                int w = (_next + k) % _workers.Length;
                if (_workers[w].OpenCount + _queues[w].Count >= _workers[w].Capacity) continue;
                if (!_queues[w].TryEnqueue(fd)) continue;
                if (_wakeFds[w] >= 0)
                {
                    ulong one = 1;
                    Native.Write(_wakeFds[w], &one, sizeof(ulong));
                }
                _next = w + 1;
                return;
            }
            Thread.Sleep(1);  // every worker full: wait for room
        }
        Native.Close(fd);
    }
}
