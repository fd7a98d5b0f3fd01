using System;
using Kite.Codec;

namespace Kite.Session;

/// <summary>Where a session's messages go: room is claimed, written in place, then committed.</summary>
public interface IOutbox
{
    /// <summary>At least <see cref="FixWriter.MaxMessage"/> bytes; the caller checked <see cref="HasRoom"/>.</summary>
    Span<byte> Claim();
    void Commit(int length);
    /// <summary>Whether count more messages fit.</summary>
    bool HasRoom(int count);
}

/// <summary>What the transport does after a message.</summary>
public enum SessionAction
{
    Continue,
    /// <summary>Send what is queued, then close the connection.</summary>
    Close,
}

public enum SessionState
{
    AwaitingLogon,
    Active,
    /// <summary>We sent a Logout and wait for the answer.</summary>
    LoggingOut,
    Closed,
}

/// <summary>Application messages: the session hands them over in sequence.</summary>
public interface IApplication
{
    /// <summary>Handles a message the session does not own; false when its MsgType is not supported.</summary>
    bool OnMessage(FixSession session, in Header header, FieldIndex ix, ReadOnlySpan<byte> body, IOutbox outbox);
}

/// <summary>
/// A FIX.4.4 acceptor session: Logon with ResetSeqNumFlag, sequence checks
/// (too low: Logout; too high: ResendRequest), TestRequest, ResendRequest
/// answered with a gap fill (no message store), SequenceReset, Logout.
/// It knows nothing of bytes on the wire: it takes the indexed message and
/// answers through an <see cref="IOutbox"/>.
/// </summary>
public sealed class FixSession
{
    public static ReadOnlySpan<byte> OwnCompID => "KITE"u8;
    public const int MaxCompID = 32;

    private readonly IApplication _app;
    private readonly UtcClock _clock;
    private readonly byte[] _compHeader = new byte[16 + 2 * MaxCompID];
    private int _compHeaderLength;
    private readonly byte[] _peer = new byte[MaxCompID];
    private int _peerLength;
    private ulong _resendAskedAt;

    public SessionState State { get; private set; }
    public ulong NextIn { get; private set; }
    public ulong NextOut { get; private set; }
    public int HeartBtInt { get; private set; }
    public ReadOnlySpan<byte> Peer => _peer.AsSpan(0, _peerLength);
    /// <summary>The message's time, set by the transport before each call (DateTime ticks, UTC).</summary>
    public long Now;

    public FixSession(IApplication app, UtcClock clock)
    {
        _app = app;
        _clock = clock;
        Reset();
    }

    /// <summary>Back to a fresh connection's state (O(1)).</summary>
    public void Reset()
    {
        State = SessionState.AwaitingLogon;
        NextIn = 1;
        NextOut = 1;
        _peerLength = 0;
        _compHeaderLength = 0;
        _resendAskedAt = 0;
    }

    /// <summary>Starts a writer for the next message of this session (MsgSeqNum NextOut, then incremented).</summary>
    public FixWriter Begin(Span<byte> buf, ReadOnlySpan<byte> msgType)
        => new FixWriter(buf, msgType, _compHeader.AsSpan(0, _compHeaderLength), NextOut++, _clock, Now);

    public UtcClock Clock => _clock;

    public SessionAction OnMessage(in Header h, FieldIndex ix, ReadOnlySpan<byte> body, IOutbox outbox)
    {
        ReadOnlySpan<byte> type = h.MsgType;
        bool logon = type.SequenceEqual("A"u8);
        // A refusal before the Logon still needs CompIDs to answer under.
        if (State == SessionState.AwaitingLogon)
            SetPeer(h.SenderCompID.Length <= MaxCompID ? h.SenderCompID : "UNKNOWN"u8);
        if (State == SessionState.AwaitingLogon && !logon) return Logout(outbox, "first message is not a Logon"u8);
        if (logon) return OnLogon(h, ix, body, outbox);
        if (!h.SenderCompID.SequenceEqual(Peer) || !h.TargetCompID.SequenceEqual(OwnCompID))
            return Logout(outbox, "CompID problem"u8);

        bool sequenceReset = type.SequenceEqual("4"u8);
        if (sequenceReset && !(ix.TryGet(body, Tag.GapFillFlag, out var gf) && gf.SequenceEqual("Y"u8)))
        {
            // Reset mode: MsgSeqNum is ignored.
            if (ix.TryGetUInt(body, Tag.NewSeqNo, out ulong reset) && reset >= NextIn) NextIn = reset;
            return SessionAction.Continue;
        }
        if (h.MsgSeqNum < NextIn)
        {
            if (h.PossDup) return SessionAction.Continue;
            return Logout(outbox, "MsgSeqNum too low"u8);
        }
        if (h.MsgSeqNum > NextIn)
        {
            if (type.SequenceEqual("5"u8)) return AnswerLogout(outbox);
            if (_resendAskedAt != NextIn)
            {
                _resendAskedAt = NextIn;
                var w = Begin(outbox.Claim(), "2"u8);
                w.AddUInt(Tag.BeginSeqNo, NextIn);
                w.AddUInt(Tag.EndSeqNo, 0);
                outbox.Commit(w.Finish());
            }
            return SessionAction.Continue;
        }
        NextIn++;
        if (type.Length == 1)
        {
            switch (type[0])
            {
                case (byte)'0': return SessionAction.Continue;
                case (byte)'1': return OnTestRequest(ix, body, outbox);
                case (byte)'2': return OnResendRequest(ix, body, outbox);
                case (byte)'3': return SessionAction.Continue;
                case (byte)'4':
                    if (ix.TryGetUInt(body, Tag.NewSeqNo, out ulong next) && next > NextIn) NextIn = next;
                    return SessionAction.Continue;
                case (byte)'5':
                    if (State == SessionState.LoggingOut) return Closed();
                    return AnswerLogout(outbox);
            }
        }
        if (State == SessionState.Active && _app.OnMessage(this, h, ix, body, outbox)) return SessionAction.Continue;
        var r = Begin(outbox.Claim(), "j"u8);
        r.AddUInt(Tag.RefSeqNum, h.MsgSeqNum);
        r.AddBytes(Tag.RefMsgType, type);
        r.AddUInt(Tag.BusinessRejectReason, 3);
        r.AddBytes(Tag.Text, "unsupported message type"u8);
        outbox.Commit(r.Finish());
        return SessionAction.Continue;
    }

    /// <summary>Starts a Logout of our own (shutdown); the session waits for the answer.</summary>
    public void StartLogout(IOutbox outbox)
    {
        if (State != SessionState.Active) return;
        var w = Begin(outbox.Claim(), "5"u8);
        outbox.Commit(w.Finish());
        State = SessionState.LoggingOut;
    }

    private SessionAction OnLogon(in Header h, FieldIndex ix, ReadOnlySpan<byte> body, IOutbox outbox)
    {
        bool reset = ix.TryGet(body, Tag.ResetSeqNumFlag, out var rf) && rf.SequenceEqual("Y"u8);
        if (h.SenderCompID.Length > MaxCompID || !h.TargetCompID.SequenceEqual(OwnCompID))
            return Logout(outbox, "unknown CompID"u8);
        if (State != SessionState.AwaitingLogon && !h.SenderCompID.SequenceEqual(Peer))
            return Logout(outbox, "CompID problem"u8);
        if (!ix.TryGetUInt(body, Tag.HeartBtInt, out ulong hb) || hb > int.MaxValue)
            return Logout(outbox, "Logon without HeartBtInt"u8);
        // No message store: a session starts at 1 (or resets to the Logon's number).
        if (!reset && h.MsgSeqNum != 1) return Logout(outbox, "no message store: send ResetSeqNumFlag=Y or MsgSeqNum 1"u8);
        SetPeer(h.SenderCompID);
        HeartBtInt = (int)hb;
        NextIn = h.MsgSeqNum + 1;
        NextOut = 1;
        _resendAskedAt = 0;
        State = SessionState.Active;
        var w = Begin(outbox.Claim(), "A"u8);
        w.AddUInt(Tag.EncryptMethod, 0);
        w.AddUInt(Tag.HeartBtInt, hb);
        w.AddChar(Tag.ResetSeqNumFlag, (byte)'Y');
        outbox.Commit(w.Finish());
        return SessionAction.Continue;
    }

    private void SetPeer(ReadOnlySpan<byte> peer)
    {
        peer.CopyTo(_peer);
        _peerLength = peer.Length;
        // "\x0149=KITE\x0156=<peer>\x0134=": rendered once per logon.
        Span<byte> c = _compHeader;
        int n = 0;
        "\u000149="u8.CopyTo(c.Slice(n)); n += 4;
        OwnCompID.CopyTo(c.Slice(n)); n += OwnCompID.Length;
        "\u000156="u8.CopyTo(c.Slice(n)); n += 4;
        peer.CopyTo(c.Slice(n)); n += peer.Length;
        "\u000134="u8.CopyTo(c.Slice(n)); n += 4;
        _compHeaderLength = n;
    }

    private SessionAction OnTestRequest(FieldIndex ix, ReadOnlySpan<byte> body, IOutbox outbox)
    {
        var w = Begin(outbox.Claim(), "0"u8);
        if (ix.TryGet(body, Tag.TestReqID, out var id)) w.AddBytes(Tag.TestReqID, id);
        outbox.Commit(w.Finish());
        return SessionAction.Continue;
    }

    private SessionAction OnResendRequest(FieldIndex ix, ReadOnlySpan<byte> body, IOutbox outbox)
    {
        if (!ix.TryGetUInt(body, Tag.BeginSeqNo, out ulong begin) || begin == 0 || begin >= NextOut)
            return SessionAction.Continue;
        // Nothing is stored: one SequenceReset-GapFill covers the whole range.
        var w = new FixWriter(outbox.Claim(), "4"u8, _compHeader.AsSpan(0, _compHeaderLength), begin, _clock, Now);
        w.AddChar(Tag.PossDupFlag, (byte)'Y');
        w.AddTime(Tag.OrigSendingTime, _clock, Now);
        w.AddChar(Tag.GapFillFlag, (byte)'Y');
        w.AddUInt(Tag.NewSeqNo, NextOut);
        outbox.Commit(w.Finish());
        return SessionAction.Continue;
    }

    private SessionAction AnswerLogout(IOutbox outbox)
    {
        var w = Begin(outbox.Claim(), "5"u8);
        outbox.Commit(w.Finish());
        return Closed();
    }

    private SessionAction Logout(IOutbox outbox, ReadOnlySpan<byte> text)
    {
        var w = Begin(outbox.Claim(), "5"u8);
        w.AddBytes(Tag.Text, text);
        outbox.Commit(w.Finish());
        return Closed();
    }

    private SessionAction Closed()
    {
        State = SessionState.Closed;
        return SessionAction.Close;
    }
}
