import collections.abc, weakref, logging
class A: pass
objs = [A() for _ in range(5)]
wv = weakref.WeakValueDictionary(enumerate(objs))
wk = weakref.WeakKeyDictionary({o: 1 for o in objs})
ws = weakref.WeakSet(objs)
print(isinstance(objs, collections.abc.Sequence), isinstance({}, collections.abc.Mapping), len(wv), len(wk), len(ws))
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
logging.info("logged to stderr")
