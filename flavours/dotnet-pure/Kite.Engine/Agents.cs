using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Kite.Transport;

/// <summary>What a thread does when a pass of its loop found no work.</summary>
public enum IdleKind
{
    /// <summary>Never sleep: poll again at once.</summary>
    Spin,
    /// <summary>Spin a while, then give the core away with sched_yield.</summary>
    Yield,
    /// <summary>Sleep in the kernel (the readiness call waits) until there is work.</summary>
    Block,
}

/// <summary>An idle strategy (Aeron's): called after every pass with the work it did.</summary>
public struct IdleStrategy
{
    public const int SpinsBeforeYield = 1000;
    /// <summary>How long a blocking readiness call waits before the loop looks at its stop flag.</summary>
    public const int BlockTimeoutMs = 100;
    public readonly IdleKind Kind;
    private int _idlePasses;

    public IdleStrategy(IdleKind kind)
    {
        Kind = kind;
        _idlePasses = 0;
    }

    public static bool TryParse(string s, out IdleKind kind)
    {
        switch (s)
        {
            case "spin": kind = IdleKind.Spin; return true;
            case "yield": kind = IdleKind.Yield; return true;
            case "block": kind = IdleKind.Block; return true;
            default: kind = IdleKind.Spin; return false;
        }
    }

    /// <summary>The timeout of the thread's readiness call: 0 unless blocking.</summary>
    public int WaitMs => Kind == IdleKind.Block ? BlockTimeoutMs : 0;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Idle(int work)
    {
        if (work > 0)
        {
            _idlePasses = 0;
            return;
        }
        if (Kind == IdleKind.Yield && ++_idlePasses > SpinsBeforeYield) Native.SchedYield();
    }
}

/// <summary>The calling thread's OS name and CPU affinity.</summary>
public static unsafe class CurrentThread
{
    /// <summary>Sets the OS thread name (/proc/self/task/*/comm, 15 characters at most).</summary>
    public static void SetName(string name)
    {
        if (name.Length > 15) throw new ArgumentException($"thread name '{name}' is over 15 characters");
        byte* buf = stackalloc byte[16];
        for (int i = 0; i < name.Length; i++) buf[i] = (byte)name[i];
        buf[name.Length] = 0;
        if (Native.Prctl(Native.PR_SET_NAME, buf, 0, 0, 0) != 0)
            throw new InvalidOperationException($"prctl(PR_SET_NAME, {name}): {Native.ErrorText(Native.Errno)}");
    }

    /// <summary>Pins the calling thread to one core (sched_setaffinity on the thread itself).</summary>
    public static void Pin(int core)
    {
        if (core < 0 || core >= 1024) throw new ArgumentOutOfRangeException(nameof(core), core, "core must be 0..1023");
        ulong* mask = stackalloc ulong[16];
        for (int i = 0; i < 16; i++) mask[i] = 0;
        mask[core / 64] = 1UL << (core % 64);
        if (Native.SchedSetAffinity(0, 16 * sizeof(ulong), mask) != 0)
            throw new InvalidOperationException($"sched_setaffinity(core {core}): {Native.ErrorText(Native.Errno)}");
        // Move now, so the core it last ran on is its own before anyone looks.
        Native.SchedYield();
    }

    public static int Cpu => Native.SchedGetCpu();
}

/// <summary>
/// A bounded single-producer single-consumer ring of ints (socket
/// descriptors from the pool's front door to one worker). Lock-free:
/// the producer owns the tail, the consumer the head, each published with
/// release stores; the two indices live on separate cache lines.
/// </summary>
public sealed class SpscQueue
{
    [StructLayout(LayoutKind.Explicit, Size = 192)]
    private struct Indices
    {
        [FieldOffset(64)] public long Head;
        [FieldOffset(128)] public long Tail;
    }

    private readonly int[] _slots;
    private readonly int _mask;
    private Indices _ix;

    /// <summary>capacity is rounded up to a power of two.</summary>
    public SpscQueue(int capacity)
    {
        if (capacity < 1) throw new ArgumentOutOfRangeException(nameof(capacity));
        int size = 1;
        while (size < capacity) size <<= 1;
        _slots = new int[size];
        _mask = size - 1;
    }

    public int Capacity => _slots.Length;
    public int Count => (int)(Volatile.Read(ref _ix.Tail) - Volatile.Read(ref _ix.Head));

    /// <summary>Producer only. False when full (back-pressure: the caller waits or retries).</summary>
    public bool TryEnqueue(int value)
    {
        long tail = _ix.Tail;
        if (tail - Volatile.Read(ref _ix.Head) == _slots.Length) return false;
        _slots[tail & _mask] = value;
        Volatile.Write(ref _ix.Tail, tail + 1);
        return true;
    }

    /// <summary>Consumer only. False when empty.</summary>
    public bool TryDequeue(out int value)
    {
        long head = _ix.Head;
        if (head == Volatile.Read(ref _ix.Tail))
        {
            value = 0;
            return false;
        }
        value = _slots[head & _mask];
        Volatile.Write(ref _ix.Head, head + 1);
        return true;
    }
}
