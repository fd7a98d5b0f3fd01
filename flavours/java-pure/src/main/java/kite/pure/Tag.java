package kite.pure;

/** FIX tag numbers the engine reads or writes. */
public final class Tag {
    private Tag() {}

    public static final int Account = 1;
    public static final int AvgPx = 6;
    public static final int BeginSeqNo = 7;
    public static final int BeginString = 8;
    public static final int BodyLength = 9;
    public static final int CheckSum = 10;
    public static final int ClOrdID = 11;
    public static final int CumQty = 14;
    public static final int EndSeqNo = 16;
    public static final int ExecID = 17;
    public static final int HandlInst = 21;
    public static final int MsgSeqNum = 34;
    public static final int MsgType = 35;
    public static final int NewSeqNo = 36;
    public static final int OrderID = 37;
    public static final int OrderQty = 38;
    public static final int OrdStatus = 39;
    public static final int OrdType = 40;
    public static final int PossDupFlag = 43;
    public static final int Price = 44;
    public static final int RefSeqNum = 45;
    public static final int SenderCompID = 49;
    public static final int SendingTime = 52;
    public static final int Side = 54;
    public static final int Symbol = 55;
    public static final int TargetCompID = 56;
    public static final int Text = 58;
    public static final int TimeInForce = 59;
    public static final int TransactTime = 60;
    public static final int EncryptMethod = 98;
    public static final int HeartBtInt = 108;
    public static final int TestReqID = 112;
    public static final int OrigSendingTime = 122;
    public static final int GapFillFlag = 123;
    public static final int ResetSeqNumFlag = 141;
    public static final int ExecType = 150;
    public static final int LeavesQty = 151;
    public static final int RefTagID = 371;
    public static final int RefMsgType = 372;
    public static final int SessionRejectReason = 373;
    public static final int BusinessRejectReason = 380;
}
