using System;
using System.Collections.Generic;
using System.Threading;
using Kite;
using Kite.DotnetNative;
using Xunit;

namespace Kite.Tests;

public class AcceptorTests
{
    [Fact]
    public void answersAnOrderWithAnExecutionReportFromCSharp()
    {
        using var rig = new Rig(new AckApplication(1));
        Assert.Equal(Status.Ok, Rig.SendOrder(rig.ClientSession, 42));
        Dictionary<int, string> r = rig.Client.WaitFor("8");
        Assert.Equal("C000000000042", r[Tag.ClOrdID]);
        Assert.Equal("0", r[Tag.ExecType]);
        Assert.Equal("0", r[Tag.OrdStatus]);
        Assert.Equal(16, r[Tag.OrderID].Length);
        Assert.Equal(r[Tag.OrderID], r[Tag.ExecID]);
        Assert.Equal("1", r[Tag.Side]);
        Assert.Equal("KITE.XPAR", r[Tag.Symbol]);
        Assert.Equal("100", r[Tag.OrderQty]);
        Assert.Equal("101.25", r[Tag.Price]);
        Assert.Equal("100", r[Tag.LeavesQty]);
        Assert.Equal("0", r[Tag.CumQty]);
        Assert.Equal("0", r[Tag.AvgPx]);
        Assert.Equal("KITE", r[49]);
        Assert.Equal("BENCH0", r[56]);
    }

    [Fact]
    public void answersAnUnknownTypeWithABusinessMessageReject()
    {
        using var rig = new Rig(new AckApplication(1));
        Assert.Equal(Status.Ok, rig.ClientSession.Send("U1"u8, "58=what\u0001"u8));
        Dictionary<int, string> r = rig.Client.WaitFor("j");
        Assert.Equal("U1", r[Tag.RefMsgType]);
        Assert.Equal("3", r[380]);
        Assert.Equal("2", r[Tag.RefSeqNum]); // the Logon was 1
    }

    [Fact]
    public void rejectsAnOrderWithoutClOrdIdAtTheSessionLevel()
    {
        // A session Reject (35=3) is the initiator session's own business, not
        // its application's: seen here as the number it takes before the next report.
        var app = new AckApplication(1);
        using var rig = new Rig(app);
        Assert.Equal(Status.Ok, rig.ClientSession.Send("D"u8, "55=KITE.XPAR\u000154=1\u000138=100\u000140=1\u0001"u8));
        Assert.Equal(Status.Ok, Rig.SendOrder(rig.ClientSession, 2));
        Dictionary<int, string> r = rig.Client.WaitFor("8");
        Assert.Equal("C000000000002", r[Tag.ClOrdID]);
        Assert.Equal("3", r[Tag.MsgSeqNum]); // Logon 1, Reject 2
        Assert.Equal(1, app.RejectCount());
        Assert.Equal(0, app.SendFailureCount());
    }

    private sealed class Throwing : Application
    {
        public readonly List<string> Errors = new();
        private int _calls;

        public override void OnMessage(Session session, in Message message)
        {
            if (Interlocked.Increment(ref _calls) == 1) throw new InvalidOperationException("first order refused");
            session.Send("8"u8, "37=1\u000111=x\u000117=1\u0001150=0\u000139=0\u000155=S\u000154=1\u0001151=0\u000114=0\u00016=0\u0001"u8);
        }

        public override void OnCallbackError(string callback, Exception error)
        {
            lock (Errors) Errors.Add(callback + ": " + error.Message);
        }
    }

    [Fact]
    public void anExceptionInACallbackStopsAtTheBoundaryAndTheSessionGoesOn()
    {
        var app = new Throwing();
        using var rig = new Rig(app);
        Assert.Equal(Status.Ok, Rig.SendOrder(rig.ClientSession, 1));
        Assert.Equal(Status.Ok, Rig.SendOrder(rig.ClientSession, 2));
        rig.Client.WaitFor("8");
        Assert.Equal(1, app.CallbackErrors);
        lock (app.Errors) Assert.Equal(new[] { "OnMessage: first order refused" }, app.Errors);
        Assert.True(rig.Client.LoggedOn);
    }

    private sealed class Recording : Application
    {
        public readonly List<(string Name, int Tid, bool Pinned, int ManagedId)> Started = new();
        public readonly List<string> Stopped = new();
        public int Logons, Logouts;

        public override void OnThreadStart(in ThreadInfo thread)
        {
            lock (Started) Started.Add((thread.Name, thread.Tid, thread.Pinned, Environment.CurrentManagedThreadId));
        }

        public override void OnThreadStop(in ThreadInfo thread)
        {
            lock (Stopped) Stopped.Add(thread.Name);
        }

        public override void OnLogon(Session session) => Interlocked.Increment(ref Logons);
        public override void OnLogout(Session session, ReadOnlySpan<byte> reason) => Interlocked.Increment(ref Logouts);
        public override void OnMessage(Session session, in Message message) { }
    }

    [Theory]
    [InlineData("single", "kite-single")]
    [InlineData("mono", "kite-mono")]
    [InlineData("pool", "kite-pool-0")]
    [InlineData("shard", "kite-shard-0")]
    public void everyEngineThreadCallsOnThreadStartBeforeStartReturns(string model, string thread)
    {
        var app = new Recording();
        using (Acceptor a = Acceptor.Start(Rig.AcceptorToml(model), app))
        {
            lock (app.Started)
            {
                Assert.Contains(app.Started, t => t.Name == thread);
                Assert.All(app.Started, t => Assert.NotEqual(Environment.CurrentManagedThreadId, t.ManagedId));
                Assert.All(app.Started, t => Assert.False(t.Pinned)); // no cores configured
            }
            Assert.Empty(app.Stopped);
        }
        lock (app.Started)
        lock (app.Stopped)
        {
            var started = app.Started.ConvertAll(t => t.Name);
            started.Sort(StringComparer.Ordinal);
            app.Stopped.Sort(StringComparer.Ordinal);
            Assert.Equal(started, app.Stopped);
        }
    }

    [Fact]
    public void logonAndLogoutReachTheApplication()
    {
        var app = new Recording();
        using (var rig = new Rig(app))
        {
            Wait.Until(() => Volatile.Read(ref app.Logons) == 1, "OnLogon");
            Assert.True(rig.Acceptor.Session(0).LoggedOn);
            rig.Initiator.Shutdown(5000);
        }
        Assert.Equal(1, Volatile.Read(ref app.Logouts));
    }

    [Fact]
    public void sendsFromOutsideACallback()
    {
        using var rig = new Rig(new AckApplication(1));
        Wait.Until(() => rig.Acceptor.Session(0).LoggedOn, "the acceptor's session logged on");
        Status s = rig.Acceptor.Session(0).Send("8"u8, "37=7\u000111=unsolicited\u000117=7\u0001150=0\u000139=0\u000155=S\u000154=1\u0001151=0\u000114=0\u00016=0\u0001"u8);
        Assert.Equal(Status.Ok, s);
        Assert.Equal("unsolicited", rig.Client.WaitFor("8")[Tag.ClOrdID]);
    }

    [Fact]
    public void aWrongConfigurationThrowsWithLibkitesText()
    {
        var e = Assert.Throws<KiteException>(() => Acceptor.Start(Rig.AcceptorToml("triple"), new AckApplication(1), "bad.toml"));
        Assert.Equal(Status.ErrorConfig, e.Status);
        Assert.Contains("bad.toml", e.Message);
        Assert.Contains("model", e.Message);
    }

    [Fact]
    public void aTransportThisBuildLacksIsUnsupported()
    {
        var e = Assert.Throws<KiteException>(() => Acceptor.Start(Rig.AcceptorToml("single", "tcpdirect"), new AckApplication(1)));
        Assert.Equal(Status.ErrorUnsupported, e.Status);
    }

    [Fact]
    public void sessionsAreReachableByIndexAndNamed()
    {
        using Acceptor a = Acceptor.Start(Rig.AcceptorToml("single"), null);
        Assert.Equal(1, a.SessionCount);
        Assert.Equal("FIX.4.4:KITE->BENCH0", a.Session(0).Id);
        Assert.Equal(0, a.Session(0).Index);
        Assert.Throws<ArgumentOutOfRangeException>(() => a.Session(1));
    }

    [Fact]
    public void aDisposedAcceptorSaysSo()
    {
        Acceptor a = Acceptor.Start(Rig.AcceptorToml("single"), null);
        a.Dispose();
        a.Dispose();
        Assert.Throws<ObjectDisposedException>(() => a.Port);
    }

    [Fact]
    public void theLibraryReportsItsVersion()
    {
        Library.EnsureLoaded();
        Assert.StartsWith("0.", Library.Version);
        Assert.Equal(0, Library.VersionNumber / 10000);
    }
}
