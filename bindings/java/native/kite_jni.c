/* The Java binding's native side: kite.Native's methods over libkite's C
 * API, and the C callbacks that call the Java application.
 *
 * Each engine thread attaches to the JVM once, in on_thread_start, under its
 * own name (attaching does not rename the OS thread), and gets a Dispatcher
 * with direct ByteBuffers over this thread's frame, field and reply buffers.
 * A message is copied into those buffers and handed over by one call through
 * a cached method ID; the reply the Java code wrote is sent with
 * kite_session_send before the callback returns. Nothing is allocated per
 * message on either side. */
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kite/kite.h"

static JavaVM* g_vm;
static jclass g_exception; /* kite.KiteException */
static jmethodID g_exception_init;
static jmethodID g_thread_started; /* Bridge.threadStarted */
static jmethodID g_on_message, g_on_logon, g_on_logout, g_on_thread_stop, g_rebind;
static jfieldID g_bridge_app; /* Bridge.app */

enum { kFrameBytes = 64 * 1024, kFieldSlots = 1024, kReplyHeader = 16, kReplyBody = 64 * 1024 };

/* One acceptor or initiator. */
typedef struct Binding {
  jobject bridge; /* global ref */
  kite_acceptor* acceptor;
  kite_initiator* initiator;
} Binding;

/* One engine thread's state (thread-local). */
typedef struct ThreadCtx {
  JNIEnv* env;
  jobject dispatcher; /* global ref */
  char* frame;
  size_t frame_cap;
  kite_field* fields;
  size_t field_cap;
  char* reply;
  size_t reply_cap;
} ThreadCtx;

static _Thread_local ThreadCtx* t_ctx;

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* reserved) {
  (void)reserved;
  g_vm = vm;
  JNIEnv* env;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  jclass ex = (*env)->FindClass(env, "kite/KiteException");
  jclass bridge = (*env)->FindClass(env, "kite/Bridge");
  jclass disp = (*env)->FindClass(env, "kite/Dispatcher");
  if (ex == NULL || bridge == NULL || disp == NULL) return JNI_ERR;
  g_exception = (*env)->NewGlobalRef(env, ex);
  g_exception_init = (*env)->GetMethodID(env, ex, "<init>", "(ILjava/lang/String;)V");
  g_thread_started = (*env)->GetMethodID(
      env, bridge, "threadStarted",
      "(Ljava/lang/String;Ljava/nio/ByteBuffer;Ljava/nio/ByteBuffer;Ljava/nio/ByteBuffer;)Lkite/Dispatcher;");
  g_bridge_app = (*env)->GetFieldID(env, bridge, "app", "Lkite/Application;");
  g_on_message = (*env)->GetMethodID(env, disp, "onMessage", "(JIIIJJ)I");
  g_on_logon = (*env)->GetMethodID(env, disp, "onLogon", "(JI)V");
  g_on_logout = (*env)->GetMethodID(env, disp, "onLogout", "(JILjava/lang/String;)V");
  g_on_thread_stop = (*env)->GetMethodID(env, disp, "onThreadStop", "()V");
  g_rebind =
      (*env)->GetMethodID(env, disp, "rebind", "(Ljava/nio/ByteBuffer;Ljava/nio/ByteBuffer;Ljava/nio/ByteBuffer;)V");
  if (g_exception_init == NULL || g_thread_started == NULL || g_bridge_app == NULL || g_on_message == NULL ||
      g_on_logon == NULL || g_on_logout == NULL || g_on_thread_stop == NULL || g_rebind == NULL)
    return JNI_ERR;
  return JNI_VERSION_1_8;
}

static void throw_kite(JNIEnv* env, int status, const char* text) {
  jstring msg = (*env)->NewStringUTF(env, text);
  jobject ex = (*env)->NewObject(env, g_exception, g_exception_init, (jint)status, msg);
  if (ex != NULL) (*env)->Throw(env, (jthrowable)ex);
}

/* A Java exception that escaped (the Dispatcher catches everything, so
 * only an Error inside the JVM itself): reported, never left pending. */
static int java_failed(JNIEnv* env) {
  if (!(*env)->ExceptionCheck(env)) return 0;
  (*env)->ExceptionDescribe(env);
  (*env)->ExceptionClear(env);
  return 1;
}

/* (Re)makes the thread's buffers and the direct ByteBuffers over them. */
static int make_buffers(ThreadCtx* c, size_t frame_cap, size_t field_cap, jobject* fb, jobject* ib, jobject* rb) {
  char* frame = malloc(frame_cap);
  kite_field* fields = malloc(field_cap * sizeof(kite_field));
  char* reply = malloc(kReplyHeader + frame_cap);
  if (frame == NULL || fields == NULL || reply == NULL) {
    free(frame);
    free(fields);
    free(reply);
    return 0;
  }
  free(c->frame);
  free(c->fields);
  free(c->reply);
  c->frame = frame;
  c->frame_cap = frame_cap;
  c->fields = fields;
  c->field_cap = field_cap;
  c->reply = reply;
  c->reply_cap = kReplyHeader + frame_cap;
  JNIEnv* env = c->env;
  *fb = (*env)->NewDirectByteBuffer(env, c->frame, (jlong)c->frame_cap);
  *ib = (*env)->NewDirectByteBuffer(env, c->fields, (jlong)(c->field_cap * sizeof(kite_field)));
  *rb = (*env)->NewDirectByteBuffer(env, c->reply, (jlong)c->reply_cap);
  return *fb != NULL && *ib != NULL && *rb != NULL;
}

static void on_thread_start(void* user, const kite_thread_info* t) {
  Binding* b = user;
  JNIEnv* env = NULL;
  JavaVMAttachArgs args = {JNI_VERSION_1_8, (char*)t->name, NULL};
  if ((*g_vm)->AttachCurrentThreadAsDaemon(g_vm, (void**)&env, &args) != JNI_OK) {
    fprintf(stderr, "kite-jni: %s: cannot attach to the JVM\n", t->name);
    return;
  }
  ThreadCtx* c = calloc(1, sizeof *c);
  if (c == NULL) return;
  c->env = env;
  jobject fb, ib, rb;
  if (!make_buffers(c, kFrameBytes, kFieldSlots, &fb, &ib, &rb)) {
    fprintf(stderr, "kite-jni: %s: cannot allocate the thread's buffers\n", t->name);
    java_failed(env);
    free(c);
    return;
  }
  jstring name = (*env)->NewStringUTF(env, t->name);
  jobject d = (*env)->CallObjectMethod(env, b->bridge, g_thread_started, name, fb, ib, rb);
  if (java_failed(env) || d == NULL) {
    free(c->frame);
    free(c->fields);
    free(c->reply);
    free(c);
    return;
  }
  c->dispatcher = (*env)->NewGlobalRef(env, d);
  (*env)->DeleteLocalRef(env, d);
  (*env)->DeleteLocalRef(env, name);
  (*env)->DeleteLocalRef(env, fb);
  (*env)->DeleteLocalRef(env, ib);
  (*env)->DeleteLocalRef(env, rb);
  t_ctx = c;
}

static void on_thread_stop(void* user, const kite_thread_info* t) {
  (void)user;
  (void)t;
  ThreadCtx* c = t_ctx;
  if (c != NULL) {
    JNIEnv* env = c->env;
    (*env)->CallVoidMethod(env, c->dispatcher, g_on_thread_stop);
    java_failed(env);
    (*env)->DeleteGlobalRef(env, c->dispatcher);
    free(c->frame);
    free(c->fields);
    free(c->reply);
    free(c);
    t_ctx = NULL;
  }
  (*g_vm)->DetachCurrentThread(g_vm);
}

static void on_logon(void* user, kite_session* s) {
  (void)user;
  ThreadCtx* c = t_ctx;
  if (c == NULL) return;
  (*c->env)->CallVoidMethod(c->env, c->dispatcher, g_on_logon, (jlong)(intptr_t)s, (jint)kite_session_index(s));
  java_failed(c->env);
}

static void on_logout(void* user, kite_session* s, const char* reason) {
  (void)user;
  ThreadCtx* c = t_ctx;
  if (c == NULL) return;
  JNIEnv* env = c->env;
  jstring r = (*env)->NewStringUTF(env, reason);
  (*env)->CallVoidMethod(env, c->dispatcher, g_on_logout, (jlong)(intptr_t)s, (jint)kite_session_index(s), r);
  java_failed(env);
  if (r != NULL) (*env)->DeleteLocalRef(env, r);
}

static void on_message(void* user, kite_session* s, const kite_message* m) {
  (void)user;
  ThreadCtx* c = t_ctx;
  if (c == NULL) return;
  JNIEnv* env = c->env;
  if (m->frame_length > c->frame_cap || m->field_count > c->field_cap) {
    size_t fc = c->frame_cap, ic = c->field_cap;
    while (fc < m->frame_length) fc *= 2;
    while (ic < m->field_count) ic *= 2;
    jobject fb, ib, rb;
    if (!make_buffers(c, fc, ic, &fb, &ib, &rb)) {
      fprintf(stderr, "kite-jni: cannot grow the thread's buffers for a %u-byte message\n", m->frame_length);
      java_failed(env);
      return;
    }
    (*env)->CallVoidMethod(env, c->dispatcher, g_rebind, fb, ib, rb);
    java_failed(env);
    (*env)->DeleteLocalRef(env, fb);
    (*env)->DeleteLocalRef(env, ib);
    (*env)->DeleteLocalRef(env, rb);
  }
  memcpy(c->frame, m->frame, m->frame_length);
  memcpy(c->fields, m->fields, (size_t)m->field_count * sizeof(kite_field));
  const jint r =
      (*env)->CallIntMethod(env, c->dispatcher, g_on_message, (jlong)(intptr_t)s, (jint)kite_session_index(s),
                            (jint)m->frame_length, (jint)m->field_count, (jlong)m->msg_seq_num, (jlong)m->time_ns);
  if (java_failed(env)) return;
  if (r == 1) {
    int32_t len;
    memcpy(&len, c->reply, sizeof len);
    char type[9];
    memcpy(type, c->reply + 4, 8);
    type[8] = '\0';
    if (len < 0 || (size_t)len > c->reply_cap - kReplyHeader) return;
    const kite_status st = kite_session_send(s, type, c->reply + kReplyHeader, (size_t)len);
    if (st != KITE_OK && st != KITE_STORED) fprintf(stderr, "kite-jni: reply not sent: %s\n", kite_last_error());
  } else if (r == 2) {
    kite_session_reject(s, m, 3, "Unsupported message type");
  }
}

static kite_callbacks callbacks_for(Binding* b) {
  kite_callbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.size = sizeof cb;
  cb.user = b;
  cb.on_thread_start = on_thread_start;
  cb.on_thread_stop = on_thread_stop;
  cb.on_logon = on_logon;
  cb.on_logout = on_logout;
  cb.on_message = on_message;
  return cb;
}

/* ---- kite.Native ---------------------------------------------------------- */

#define NATIVE(ret, name) JNIEXPORT ret JNICALL Java_kite_Native_##name
#define BINDING(h) ((Binding*)(intptr_t)(h))

NATIVE(jstring, version)(JNIEnv* env, jclass cls) {
  (void)cls;
  return (*env)->NewStringUTF(env, kite_version());
}

NATIVE(jint, versionNumber)(JNIEnv* env, jclass cls) {
  (void)env;
  (void)cls;
  return kite_version_number();
}

static jlong start(JNIEnv* env, jstring text, jstring name, jboolean is_file, jobject bridge, int acceptor) {
  if (text == NULL || bridge == NULL) {
    throw_kite(env, KITE_ERROR_ARGUMENT, "start: null argument");
    return 0;
  }
  Binding* b = calloc(1, sizeof *b);
  if (b == NULL) {
    throw_kite(env, KITE_ERROR_START, "start: out of memory");
    return 0;
  }
  b->bridge = (*env)->NewGlobalRef(env, bridge);
  const char* t = (*env)->GetStringUTFChars(env, text, NULL);
  const char* n = name != NULL ? (*env)->GetStringUTFChars(env, name, NULL) : NULL;
  const kite_callbacks cb = callbacks_for(b);
  /* A Bridge without an Application: kite-acceptor's own (no crossing). */
  const int builtin = (*env)->GetObjectField(env, bridge, g_bridge_app) == NULL;
  kite_status st;
  if (acceptor) {
    const kite_callbacks* c = builtin ? NULL : &cb;
    st = is_file ? kite_acceptor_start_file(t, c, &b->acceptor) : kite_acceptor_start_string(t, n, c, &b->acceptor);
  } else {
    st = is_file ? kite_initiator_start_file(t, &cb, &b->initiator)
                 : kite_initiator_start_string(t, n, &cb, &b->initiator);
  }
  (*env)->ReleaseStringUTFChars(env, text, t);
  if (n != NULL) (*env)->ReleaseStringUTFChars(env, name, n);
  if (st != KITE_OK) {
    throw_kite(env, st, kite_last_error());
    (*env)->DeleteGlobalRef(env, b->bridge);
    free(b);
    return 0;
  }
  return (jlong)(intptr_t)b;
}

static void release(JNIEnv* env, Binding* b) {
  (*env)->DeleteGlobalRef(env, b->bridge);
  free(b);
}

NATIVE(jlong, acceptorStart)(JNIEnv* env, jclass cls, jstring text, jstring name, jboolean is_file, jobject bridge) {
  (void)cls;
  return start(env, text, name, is_file, bridge, 1);
}

NATIVE(jint, acceptorPort)(JNIEnv* env, jclass cls, jlong h) {
  (void)env;
  (void)cls;
  return kite_acceptor_port(BINDING(h)->acceptor);
}

NATIVE(jint, acceptorSessionCount)(JNIEnv* env, jclass cls, jlong h) {
  (void)env;
  (void)cls;
  return (jint)kite_acceptor_session_count(BINDING(h)->acceptor);
}

NATIVE(jlong, acceptorSession)(JNIEnv* env, jclass cls, jlong h, jint i) {
  (void)env;
  (void)cls;
  return i < 0 ? 0 : (jlong)(intptr_t)kite_acceptor_session(BINDING(h)->acceptor, (size_t)i);
}

NATIVE(void, acceptorShutdown)(JNIEnv* env, jclass cls, jlong h) {
  (void)env;
  (void)cls;
  kite_acceptor_shutdown(BINDING(h)->acceptor);
}

NATIVE(void, acceptorStop)(JNIEnv* env, jclass cls, jlong h) {
  (void)env;
  (void)cls;
  kite_acceptor_stop(BINDING(h)->acceptor);
}

NATIVE(void, acceptorFree)(JNIEnv* env, jclass cls, jlong h) {
  (void)cls;
  kite_acceptor_free(BINDING(h)->acceptor);
  release(env, BINDING(h));
}

NATIVE(jint, acceptorThreadCount)(JNIEnv* env, jclass cls, jlong h) {
  (void)env;
  (void)cls;
  return (jint)kite_acceptor_thread_count(BINDING(h)->acceptor);
}

NATIVE(jstring, acceptorThreadLoad)(JNIEnv* env, jclass cls, jlong h, jint i, jlongArray out) {
  (void)cls;
  kite_thread_load l;
  if (i < 0 || kite_acceptor_thread_load(BINDING(h)->acceptor, (size_t)i, &l) != KITE_OK) {
    throw_kite(env, KITE_ERROR_ARGUMENT, kite_last_error());
    return NULL;
  }
  const jlong v[4] = {(jlong)l.cycles, (jlong)l.idle_cycles, (jlong)l.busy_ns, (jlong)l.total_ns};
  (*env)->SetLongArrayRegion(env, out, 0, 4, v);
  return (*env)->NewStringUTF(env, l.name);
}

NATIVE(jlong, initiatorStart)(JNIEnv* env, jclass cls, jstring text, jstring name, jboolean is_file, jobject bridge) {
  (void)cls;
  return start(env, text, name, is_file, bridge, 0);
}

NATIVE(jint, initiatorSessionCount)(JNIEnv* env, jclass cls, jlong h) {
  (void)env;
  (void)cls;
  return (jint)kite_initiator_session_count(BINDING(h)->initiator);
}

NATIVE(jlong, initiatorSession)(JNIEnv* env, jclass cls, jlong h, jint i) {
  (void)env;
  (void)cls;
  return i < 0 ? 0 : (jlong)(intptr_t)kite_initiator_session(BINDING(h)->initiator, (size_t)i);
}

NATIVE(void, initiatorShutdown)(JNIEnv* env, jclass cls, jlong h, jint wait_ms) {
  (void)env;
  (void)cls;
  kite_initiator_shutdown(BINDING(h)->initiator, wait_ms);
}

NATIVE(void, initiatorStop)(JNIEnv* env, jclass cls, jlong h) {
  (void)env;
  (void)cls;
  kite_initiator_stop(BINDING(h)->initiator);
}

NATIVE(void, initiatorFree)(JNIEnv* env, jclass cls, jlong h) {
  (void)cls;
  kite_initiator_free(BINDING(h)->initiator);
  release(env, BINDING(h));
}

NATIVE(jint, sessionSend)(JNIEnv* env, jclass cls, jlong s, jbyteArray type, jobject body, jint length) {
  (void)cls;
  char t[16];
  const jsize n = (*env)->GetArrayLength(env, type);
  if (n < 1 || n >= (jsize)sizeof t) return KITE_ERROR_ARGUMENT;
  (*env)->GetByteArrayRegion(env, type, 0, n, (jbyte*)t);
  t[n] = '\0';
  const char* p = (*env)->GetDirectBufferAddress(env, body);
  if (p == NULL) return KITE_ERROR_ARGUMENT;
  return (jint)kite_session_send((kite_session*)(intptr_t)s, t, p, (size_t)length);
}

NATIVE(jstring, sessionId)(JNIEnv* env, jclass cls, jlong s) {
  (void)cls;
  return (*env)->NewStringUTF(env, kite_session_id((kite_session*)(intptr_t)s));
}

NATIVE(jboolean, sessionLoggedOn)(JNIEnv* env, jclass cls, jlong s) {
  (void)env;
  (void)cls;
  return kite_session_logged_on((kite_session*)(intptr_t)s) ? JNI_TRUE : JNI_FALSE;
}
