// kite-example CONFIG.toml: a Kite acceptor (engine, sockets, FIX session in
// libkite) whose application is C#: it accepts every NewOrderSingle.
using System;
using System.Runtime.InteropServices;
using System.Threading;
using Kite;

sealed class AcceptEveryOrder : Application
{
    private long _lastId = 1_000_000;

    // On an engine thread, for each application message; the message is a
    // view valid during this call, and the reply goes out from inside it.
    public override void OnMessage(Session session, in Message message)
    {
        if (!message.MsgType.SequenceEqual("D"u8))
        {
            session.Reject(message, Session.UnsupportedMessageType, "Unsupported message type"u8);
            return;
        }
        long id = Interlocked.Increment(ref _lastId);
        var report = new FieldWriter(stackalloc byte[512]);
        report.Add(Tag.OrderID, id);
        report.Add(Tag.ClOrdID, message.Get(Tag.ClOrdID));
        report.Add(Tag.ExecID, id);
        report.Add(Tag.ExecType, '0');
        report.Add(Tag.OrdStatus, '0');
        report.Add(Tag.Symbol, message.Get(Tag.Symbol));
        report.Add(Tag.Side, message.Get(Tag.Side));
        report.Add(Tag.OrderQty, message.Get(Tag.OrderQty));
        report.Add(Tag.LeavesQty, message.Get(Tag.OrderQty));
        report.Add(Tag.CumQty, 0L);
        report.Add(Tag.AvgPx, 0L);
        report.AddUtcTimestampMillis(Tag.TransactTime, message.TimeNs);
        session.Send("8"u8, report.Written);
    }
}

static class Program
{
    static int Main(string[] args)
    {
        if (args.Length != 1)
        {
            Console.Error.WriteLine("usage: kite-example CONFIG.toml");
            return 2;
        }
        using var stop = new ManualResetEventSlim();
        using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => { c.Cancel = true; stop.Set(); });
        using var intr = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => { c.Cancel = true; stop.Set(); });
        try
        {
            using Acceptor acceptor = Acceptor.StartFile(args[0], new AcceptEveryOrder());
            Console.WriteLine($"listening on port {acceptor.Port}");
            stop.Wait();
            acceptor.Shutdown(); // a Logout to every session, then stop
        }
        catch (KiteException e)
        {
            Console.Error.WriteLine(e.Message);
            return 1;
        }
        return 0;
    }
}
