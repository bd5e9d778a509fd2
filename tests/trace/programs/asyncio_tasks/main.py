import asyncio


async def tick(name, n):
    out = []
    for i in range(n):
        await asyncio.sleep(0)
        out.append("%s%d" % (name, i))
    return out


async def agen(n):
    for i in range(n):
        yield i * i


async def main():
    a, b = await asyncio.gather(tick("a", 3), tick("b", 2))
    squares = [x async for x in agen(4)]
    print(a, b, squares)


asyncio.run(main())
