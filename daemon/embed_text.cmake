# cmake -DIN=FILE -DOUT=FILE.c -DNAME=symbol -P embed_text.cmake: FILE's
# bytes as `const char NAME[]`, NUL-terminated (a file of the tree built
# into the daemon, so that one copy serves it and whoever else reads it).
# OUT is rewritten only when it changes.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
set(text "/* generated from ${IN} by daemon/embed_text.cmake: do not edit */\nconst char ${NAME}[] = {${bytes}0x00};\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
