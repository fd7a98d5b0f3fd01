using System;
using System.Collections.Generic;
using System.Text;
using Kite.App;
using Kite.Codec;
using Kite.Session;
using Kite.Transport;
using Xunit;

namespace Kite.Tests;

/// <summary>A decoded reply: MsgType and the fields as text (test side only).</summary>
public sealed class Reply
{
    public readonly Dictionary<int, string> Fields = new();
    public string Type => Fields[Tag.MsgType];
    public string Get(int tag) => Fields.TryGetValue(tag, out var v) ? v : "";
    public int Length;
}

/// <summary>A connection slot fed by the test instead of a socket.</summary>
public sealed class Rig : IDisposable
{
    public readonly OrderAck App = new();
    public readonly Connection Conn;
    public readonly FieldIndex Index = new();
    public readonly ClientMessages Client = new("BENCH0");
    private readonly byte[] _buf = new byte[64 * 1024];
    private readonly byte[] _out = new byte[64 * 1024];

    public Rig() => Conn = new Connection(0, App, new UtcClock());

    public List<Reply> Send(Func<byte[], int> write)
    {
        int n = write(_buf);
        Conn.Feed(_buf.AsSpan(0, n), Index);
        return Drain();
    }

    public List<Reply> SendBytes(ReadOnlySpan<byte> bytes)
    {
        Conn.Feed(bytes, Index);
        return Drain();
    }

    public List<Reply> Drain()
    {
        ReadOnlySpan<byte> tx = Conn.TakeTx(_out);
        var replies = new List<Reply>();
        while (!tx.IsEmpty)
        {
            Frame f = Framing.Next(tx);
            Assert.Equal(FrameStatus.Complete, f.Status);
            var r = new Reply { Length = f.Length };
            foreach (string field in Encoding.ASCII.GetString(tx.Slice(f.BodyStart, f.BodyLength)).TrimEnd('\u0001').Split('\u0001'))
            {
                int eq = field.IndexOf('=');
                r.Fields.TryAdd(int.Parse(field.Substring(0, eq)), field.Substring(eq + 1));
            }
            replies.Add(r);
            tx = tx.Slice(f.Length);
        }
        return replies;
    }

    public void Logon()
    {
        var r = Send(b => Client.Logon(b));
        Assert.Single(r);
        Assert.Equal("A", r[0].Type);
    }

    public void Dispose() => Conn.Dispose();
}
