using System;
using System.Runtime.InteropServices;
using Kite.Codec;
using Kite.Session;

namespace Kite.Transport;

/// <summary>
/// One connection slot: a socket, receive and send buffers in native memory
/// (allocated once, reused by every connection the slot serves) and its FIX
/// session. The frames of a read are walked in place; replies are written in
/// place into the send buffer and sent once per read.
/// </summary>
public sealed unsafe class Connection : IOutbox, IDisposable
{
    public const int RxCapacity = 64 * 1024, TxCapacity = 64 * 1024;
    /// <summary>One incoming message answers with at most this many messages.</summary>
    private const int RepliesPerMessage = 2;

    private readonly byte* _rx, _tx;
    private int _rxLength, _txHead, _txTail;
    public int Fd { get; private set; } = -1;
    public readonly FixSession Session;
    /// <summary>Send what is queued, then close.</summary>
    public bool Closing { get; private set; }
    /// <summary>Frames wait in the receive buffer for room in the send buffer.</summary>
    public bool RxBacklog { get; private set; }
    public bool HasTx => _txTail > _txHead;
    public int Slot { get; }

    public Connection(int slot, IApplication app, UtcClock clock)
    {
        Slot = slot;
        _rx = (byte*)NativeMemory.AlignedAlloc(RxCapacity, 64);
        _tx = (byte*)NativeMemory.AlignedAlloc(TxCapacity, 64);
        Session = new FixSession(app, clock);
    }

    public bool Open => Fd >= 0;

    public void Attach(int fd)
    {
        Fd = fd;
        _rxLength = _txHead = _txTail = 0;
        Closing = RxBacklog = false;
        Session.Reset();
    }

    /// <summary>Closes the socket and frees the slot.</summary>
    public void Detach()
    {
        if (Fd >= 0) Native.Close(Fd);
        Fd = -1;
        Session.Reset();
    }

    public Span<byte> Claim() => new Span<byte>(_tx + _txTail, TxCapacity - _txTail);
    public void Commit(int length) => _txTail += length;

    public bool HasRoom(int count)
    {
        int need = count * FixWriter.MaxMessage;
        if (TxCapacity - _txTail >= need) return true;
        if (_txHead > 0)
        {
            Buffer.MemoryCopy(_tx + _txHead, _tx, TxCapacity, _txTail - _txHead);
            _txTail -= _txHead;
            _txHead = 0;
        }
        return TxCapacity - _txTail >= need;
    }

    /// <summary>One non-blocking read and the frames it completed. Returns bytes read; -1 when the connection ended.</summary>
    public int Read(FieldIndex ix)
    {
        // A full receive buffer waits for room to send (back-pressure); full of garbage, it ends the connection.
        if (_rxLength == RxCapacity) return Process(ix) > 0 || RxBacklog ? 0 : -1;
        nint n = Native.Recv(Fd, _rx + _rxLength, (nuint)(RxCapacity - _rxLength), Native.MSG_DONTWAIT);
        if (n > 0)
        {
            _rxLength += (int)n;
            Process(ix);
            return (int)n;
        }
        if (n == 0) return -1;
        int e = Native.Errno;
        return e == Native.EAGAIN || e == Native.EINTR ? 0 : -1;
    }

    /// <summary>Bytes arrive from somewhere other than the socket (tests, warm-up).</summary>
    public int Feed(ReadOnlySpan<byte> bytes, FieldIndex ix)
    {
        int n = Math.Min(bytes.Length, RxCapacity - _rxLength);
        bytes.Slice(0, n).CopyTo(new Span<byte>(_rx + _rxLength, n));
        _rxLength += n;
        Process(ix);
        return n;
    }

    /// <summary>Walks the complete frames in the receive buffer; returns how many were handled.</summary>
    public int Process(FieldIndex ix)
    {
        var rx = new ReadOnlySpan<byte>(_rx, _rxLength);
        int offset = 0, handled = 0;
        RxBacklog = false;
        Session.Now = DateTime.UtcNow.Ticks;
        while (offset < rx.Length && !Closing)
        {
            if (!HasRoom(RepliesPerMessage))
            {
                RxBacklog = true;
                break;
            }
            Frame f = Framing.Next(rx.Slice(offset));
            if (f.Status == FrameStatus.Incomplete) break;
            if (f.Status == FrameStatus.Complete)
            {
                ReadOnlySpan<byte> body = rx.Slice(offset + f.BodyStart, f.BodyLength);
                // A frame whose fields cannot be indexed is garbled: ignored like a bad CheckSum.
                if (ix.Build(body) && Header.Read(ix, body, out Header h))
                {
                    if (Session.OnMessage(h, ix, body, this) == SessionAction.Close) Closing = true;
                    handled++;
                }
            }
            offset += f.Length;
        }
        if (offset > 0)
        {
            Buffer.MemoryCopy(_rx + offset, _rx, RxCapacity, _rxLength - offset);
            _rxLength -= offset;
        }
        return handled;
    }

    /// <summary>Sends what is queued (non-blocking). False when the connection is done (closed by us or failed).</summary>
    public bool Flush()
    {
        while (_txTail > _txHead)
        {
            nint n = Native.Send(Fd, _tx + _txHead, (nuint)(_txTail - _txHead), Native.MSG_NOSIGNAL | Native.MSG_DONTWAIT);
            if (n < 0)
            {
                int e = Native.Errno;
                if (e == Native.EAGAIN) return true;
                if (e == Native.EINTR) continue;
                return false;
            }
            _txHead += (int)n;
        }
        _txHead = _txTail = 0;
        return !Closing;
    }

    /// <summary>What the session queued (tests, warm-up): the bytes, then the queue is emptied.</summary>
    public ReadOnlySpan<byte> TakeTx(Span<byte> into)
    {
        int n = _txTail - _txHead;
        new ReadOnlySpan<byte>(_tx + _txHead, n).CopyTo(into);
        _txHead = _txTail = 0;
        return into.Slice(0, n);
    }

    public void Dispose()
    {
        Detach();
        NativeMemory.AlignedFree(_rx);
        NativeMemory.AlignedFree(_tx);
    }
}
