using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Text;
using System.Threading;
using Kite;

namespace Kite.Tests;

// An acceptor and a Kite initiator logged on to it, in this process, over
// loopback; both applications in C#. Threads block when idle (the test
// machine is shared) and are not pinned.
internal sealed class Rig : IDisposable
{
    public readonly Acceptor Acceptor;
    public readonly Initiator Initiator;
    public readonly ClientApp Client;

    public Rig(Application server, string model = "single", ClientApp? client = null)
    {
        Acceptor = Acceptor.Start(AcceptorToml(model), server, "test acceptor");
        Client = client ?? new ClientApp();
        try
        {
            Initiator = Initiator.Start(InitiatorToml(Acceptor.Port), Client, "test initiator");
        }
        catch
        {
            Acceptor.Dispose();
            throw;
        }
        Wait.Until(() => Client.LoggedOn, "the initiator's Logon answered");
    }

    public Session ClientSession => Initiator.Session(0);

    public static string AcceptorToml(string model, string transport = "kernel") =>
        "[engine]\n" +
        $"model = \"{model}\"\ntransport = \"{transport}\"\nbind = \"127.0.0.1\"\nport = 0\nworkers = 1\nidle = \"block\"\n" +
        "\n[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nResetOnLogon = true\n" +
        "UseDataDictionary = false\nCheckLatency = false\nStoreKind = \"null\"\n" +
        "\n[[session]]\nTargetCompID = \"BENCH0\"\n";

    public static string InitiatorToml(int port) =>
        "[engine]\ntransport = \"kernel\"\nidle = \"block\"\n" +
        "\n[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"BENCH0\"\nResetOnLogon = true\n" +
        "UseDataDictionary = false\nCheckLatency = false\nStoreKind = \"null\"\n" +
        "\n[[session]]\nTargetCompID = \"KITE\"\nConnectionType = \"initiator\"\n" +
        $"SocketConnectHost = \"127.0.0.1\"\nSocketConnectPort = {port}\nHeartBtInt = 30\n";

    // A NewOrderSingle's body as the lab's client writes it: ClOrdID "C" and 12 digits.
    public static void WriteOrder(ref FieldWriter w, long n)
    {
        Span<byte> id = stackalloc byte[13];
        id[0] = (byte)'C';
        for (int i = 12; i >= 1; --i, n /= 10) id[i] = (byte)('0' + n % 10);
        w.Add(Tag.ClOrdID, id);
        w.Add(21, '1');
        w.Add(1, "BENCH-ACCOUNT-001"u8);
        w.Add(Tag.Symbol, "KITE.XPAR"u8);
        w.Add(Tag.Side, '1');
        w.AddUtcTimestampMillis(Tag.TransactTime, 1_764_000_000_000_000_000);
        w.Add(Tag.OrderQty, 100L);
        w.Add(Tag.OrdType, '2');
        w.Add(Tag.Price, new FixDecimal(10125, 2));
        w.Add(Tag.TimeInForce, '0');
    }

    public static Status SendOrder(Session s, long n)
    {
        Span<byte> body = stackalloc byte[256];
        var w = new FieldWriter(body);
        WriteOrder(ref w, n);
        return s.Send("D"u8, w.Written);
    }

    public void Dispose()
    {
        Initiator.Dispose();
        Acceptor.Dispose();
    }
}

// The initiator's application: keeps a copy of every message it receives.
internal class ClientApp : Application
{
    private readonly object _lock = new();
    private readonly List<Dictionary<int, string>> _received = new();
    private volatile bool _loggedOn;

    public bool LoggedOn => _loggedOn;

    public override void OnLogon(Session session) => _loggedOn = true;

    public override void OnLogout(Session session, ReadOnlySpan<byte> reason) => _loggedOn = false;

    public override void OnMessage(Session session, in Message message)
    {
        var fields = new Dictionary<int, string>();
        for (int i = 0; i < message.FieldCount; ++i)
        {
            Field f = message[i];
            fields.TryAdd(f.Tag, Encoding.ASCII.GetString(f.Value));
        }
        lock (_lock) _received.Add(fields);
    }

    public List<Dictionary<int, string>> Received
    {
        get
        {
            lock (_lock) return new List<Dictionary<int, string>>(_received);
        }
    }

    public Dictionary<int, string> WaitFor(string msgType)
    {
        Dictionary<int, string>? found = null;
        Wait.Until(() => (found = Received.Find(m => m[Tag.MsgType] == msgType)) != null, $"a message 35={msgType}");
        return found!;
    }
}

internal static class Wait
{
    // Not a timing threshold: how long to wait before calling a test hung.
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    public static void Until(Func<bool> done, string what)
    {
        var clock = Stopwatch.StartNew();
        while (!done())
        {
            if (clock.Elapsed > Patience) throw new TimeoutException($"no {what} after {Patience.TotalSeconds} s");
            Thread.Sleep(1);
        }
    }
}
